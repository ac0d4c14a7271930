//! What authenticated command lines (`aws`, `gh`) do with the user's identity, by verb:
//! - verbs whose *output* is a credential (`aws sts get-session-token`, `aws iam
//!   create-access-key`, `aws secretsmanager get-secret-value`, `aws ecr
//!   get-login-password`, a runner registration token from `gh api`) read the credential
//!   the client holds, like `gh auth token` does, so their output sent to the network is
//!   credential theft;
//! - verbs that grant access to someone or publish (a collaborator, a deploy key, a
//!   policy attached to a user, a repository made public) are privilege changes made
//!   with the user's identity: `cordon check` denies them for an agent and the skill
//!   review puts them before a human.

use super::Outcome;
use crate::model::Word;

/// AWS `SERVICE OPERATION` pairs whose output is a secret or a fresh credential.
const AWS_SECRET_OUTPUTS: &[(&str, &[&str])] = &[
    (
        "sts",
        &[
            "get-session-token",
            "get-federation-token",
            "assume-role",
            "assume-role-with-saml",
            "assume-role-with-web-identity",
        ],
    ),
    (
        "iam",
        &[
            "create-access-key",
            "create-service-specific-credential",
            "reset-service-specific-credential",
        ],
    ),
    (
        "secretsmanager",
        &["get-secret-value", "batch-get-secret-value"],
    ),
    ("ecr", &["get-login-password", "get-authorization-token"]),
    (
        "ecr-public",
        &["get-login-password", "get-authorization-token"],
    ),
    ("codeartifact", &["get-authorization-token"]),
    ("eks", &["get-token"]),
    ("rds", &["generate-db-auth-token"]),
    ("kms", &["decrypt"]),
    ("sso", &["get-role-credentials"]),
    ("cognito-identity", &["get-credentials-for-identity"]),
    ("ec2", &["get-password-data"]),
    (
        "lightsail",
        &["get-instance-access-details", "download-default-key-pair"],
    ),
];

/// SSM parameter reads: secret when decrypted.
const AWS_SSM_READS: &[&str] = &[
    "get-parameter",
    "get-parameters",
    "get-parameters-by-path",
    "get-parameter-history",
];

/// AWS operations that grant access to a principal or open a resource to others.
const AWS_GRANTS: &[(&str, &[&str])] = &[
    (
        "iam",
        &[
            "create-user",
            "create-login-profile",
            "update-login-profile",
            "create-access-key",
            "add-user-to-group",
            "attach-user-policy",
            "attach-role-policy",
            "attach-group-policy",
            "put-user-policy",
            "put-role-policy",
            "put-group-policy",
            "create-policy-version",
            "update-assume-role-policy",
            "upload-ssh-public-key",
        ],
    ),
    (
        "s3api",
        &[
            "put-bucket-policy",
            "put-bucket-acl",
            "put-object-acl",
            "delete-public-access-block",
        ],
    ),
    (
        "ec2",
        &[
            "authorize-security-group-ingress",
            "modify-image-attribute",
            "modify-snapshot-attribute",
            "import-key-pair",
        ],
    ),
    ("lambda", &["add-permission", "create-function-url-config"]),
    ("kms", &["create-grant", "put-key-policy"]),
    ("secretsmanager", &["put-resource-policy"]),
    ("ecr", &["set-repository-policy"]),
    ("sns", &["add-permission"]),
    ("sqs", &["add-permission"]),
];

/// Path parts of GitHub API endpoints that change who has access, hold secrets or send
/// the repository's events elsewhere.
const GH_ACCESS_ENDPOINTS: &[&str] = &[
    "collaborators",
    "invitations",
    "memberships",
    "members",
    "keys",
    "gpg_keys",
    "ssh_signing_keys",
    "hooks",
    "secrets",
    "variables",
    "protection",
    "permissions",
    "installations",
    "outside_collaborators",
];

/// GitHub API endpoints (last part) whose response is a fresh token.
const GH_TOKEN_ENDPOINTS: &[&str] = &["registration-token", "remove-token", "access_tokens"];

/// The positional word after `service` that names its operation, when `service` is used.
fn aws_operation<'w>(pos: &[&'w Word], service: &str) -> Option<&'w str> {
    pos.windows(2)
        .find(|p| p[0].value == service)
        .map(|p| p[1].value.as_str())
}

/// Judge an `aws` invocation by its verb (see the module docs).
pub(super) fn aws(pos: &[&Word], args: &[Word], o: &mut Outcome) {
    let secret = AWS_SECRET_OUTPUTS
        .iter()
        .any(|(s, ops)| aws_operation(pos, s).is_some_and(|op| ops.contains(&op)))
        || (aws_operation(pos, "ssm").is_some_and(|op| AWS_SSM_READS.contains(&op))
            && args.iter().any(|w| w.value == "--with-decryption"));
    if secret {
        o.reads([&Word::literal("~/.aws/credentials")]);
    }
    if let Some((s, op)) = AWS_GRANTS.iter().find_map(|(s, ops)| {
        aws_operation(pos, s)
            .filter(|op| ops.contains(op))
            .map(|op| (*s, op))
    }) {
        o.privilege(&format!(
            "aws {s} {op} grants access with the user's AWS identity"
        ));
    }
}

/// The HTTP method of `gh api`: `-X`/`--method`, else POST when fields are given.
fn gh_api_method(args: &[Word]) -> String {
    let mut fields = false;
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let v = w.value.as_str();
        if v == "-X" || v == "--method" {
            return it
                .next()
                .map(|m| m.value.to_ascii_uppercase())
                .unwrap_or_default();
        }
        if let Some(m) = v.strip_prefix("--method=").or(v.strip_prefix("-X")) {
            return m.to_ascii_uppercase();
        }
        if matches!(v, "-f" | "-F" | "--field" | "--raw-field" | "--input")
            || v.starts_with("--field=")
            || v.starts_with("--raw-field=")
        {
            fields = true;
        }
    }
    if fields { "POST" } else { "GET" }.to_string()
}

/// The endpoint of `gh api`: the first operand after `api`, option values skipped.
fn gh_api_endpoint(args: &[Word]) -> Option<&Word> {
    const VALUED: &[&str] = &[
        "-X",
        "--method",
        "-f",
        "--raw-field",
        "-F",
        "--field",
        "-H",
        "--header",
        "--input",
        "-q",
        "--jq",
        "-t",
        "--template",
        "--hostname",
        "-p",
        "--preview",
        "--cache",
    ];
    let mut it = args.iter().skip_while(|w| w.value != "api").skip(1);
    while let Some(w) = it.next() {
        if VALUED.contains(&w.value.as_str()) {
            it.next();
        } else if !w.value.starts_with('-') {
            return Some(w);
        }
    }
    None
}

/// Judge `gh api ENDPOINT …` (see the module docs).
pub(super) fn gh_api(args: &[Word], o: &mut Outcome) {
    let Some(endpoint) = gh_api_endpoint(args) else {
        return;
    };
    let path = endpoint.value.split(['?', '#']).next().unwrap_or("");
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.last().is_some_and(|l| GH_TOKEN_ENDPOINTS.contains(l)) {
        o.reads([&Word::literal("~/.config/gh/hosts.yml")]);
    }
    let method = gh_api_method(args);
    if method == "GET" || method == "HEAD" {
        return;
    }
    let access = parts.iter().any(|p| GH_ACCESS_ENDPOINTS.contains(p));
    // `PATCH repos/O/R -f visibility=public` / `-F private=false`.
    let public = args.iter().any(|w| {
        let v = w.value.replace(['"', '\'', ' '], "");
        v == "visibility=public" || v == "private=false"
    });
    if access || public || !endpoint.literal {
        o.privilege(&format!(
            "gh api {method} {} changes access to GitHub resources with the user's identity",
            endpoint.value
        ));
    }
}

/// Judge the `gh` verbs that grant access or publish (see the module docs).
pub(super) fn gh(pos: &[&Word], args: &[Word], o: &mut Outcome) {
    let verb = |k: usize| pos.get(k).map(|w| w.value.as_str());
    let has = |names: &[&str]| {
        args.iter().any(|w| {
            names
                .iter()
                .any(|n| w.value == *n || w.value.starts_with(&format!("{n}=")))
        })
    };
    let value_public = args
        .windows(2)
        .any(|p| p[0].value == "--visibility" && p[1].value == "public")
        || args.iter().any(|w| w.value == "--visibility=public");
    let why = match (verb(0), verb(1), verb(2)) {
        (Some("repo"), Some("deploy-key"), Some("add")) => {
            Some("gh repo deploy-key add gives a key access to the repository")
        }
        (Some("ssh-key" | "gpg-key"), Some("add"), _) => {
            Some("adds a key to the user's GitHub account")
        }
        (Some("repo"), Some("create" | "edit"), _) if value_public || has(&["--public"]) => {
            Some("makes a repository public with the user's GitHub identity")
        }
        (Some("auth"), Some("refresh"), _) if has(&["-s", "--scopes"]) => {
            Some("widens the scopes of the user's GitHub token")
        }
        _ => None,
    };
    if let Some(why) = why {
        o.privilege(why);
    }
}
