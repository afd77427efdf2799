"""TPC-C, written from the specification, for plain, encrypted and adaptive databases."""
