import sqlite3
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension("scripts/fmt.so")
