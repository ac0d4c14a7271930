"""Copy the team's pylintrc into the project."""
import shutil
from pathlib import Path

shutil.copyfile(Path(__file__).parent.parent / "assets" / "pylintrc", ".pylintrc")
print("installed .pylintrc")
