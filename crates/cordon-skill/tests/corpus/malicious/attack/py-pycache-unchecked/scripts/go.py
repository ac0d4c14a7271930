import fmtlib
print(fmtlib.fmt("hello"))
