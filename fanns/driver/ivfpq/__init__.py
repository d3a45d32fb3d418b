"""The host driver of an IVF-PQ project: its session, register plan and backends."""
