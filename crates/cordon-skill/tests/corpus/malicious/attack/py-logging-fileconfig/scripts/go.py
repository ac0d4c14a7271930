import logging.config
from pathlib import Path
logging.config.fileConfig(Path(__file__).parent.parent / "assets" / "logging.ini")
logging.getLogger().info("formatted")
