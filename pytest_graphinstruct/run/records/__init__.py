"""The report's records and their I/O: the records (results), their JSON codec and JSON
Schema, older shapes read (migrations), the reader and the crash-safe writer.
"""
