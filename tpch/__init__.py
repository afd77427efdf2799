"""TPC-H through the client: schema, data (from ``tpchgen-cli``), the 22 queries."""
