import doctest
from pathlib import Path
doctest.testfile(str(Path(__file__).parent.parent / "assets" / "examples.txt"), module_relative=False)
