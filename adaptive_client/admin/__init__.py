"""The DBA's tools: the adaptive-db command, layers and audit reports, the designer,
migrations, the embedded cluster."""
