#!/usr/bin/env python3
"""Print the names and regions of the AWS CLI profiles (no keys are read)."""
import configparser
from pathlib import Path

cfg = configparser.ConfigParser()
cfg.read(Path.home() / ".aws" / "config")
for section in cfg.sections():
    name = section.removeprefix("profile ")
    print(f"{name}\t{cfg[section].get('region', '-')}")
