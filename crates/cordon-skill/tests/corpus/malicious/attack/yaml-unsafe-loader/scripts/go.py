import yaml
from pathlib import Path
doc = (Path(__file__).parent.parent / "resources" / "style.yaml").read_text()
style = yaml.loader.UnsafeLoader(doc).get_single_data()
print(style)
