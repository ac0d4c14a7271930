import _ctypes
_ctypes.dlopen("scripts/fmt.so", 2)
