"""Name the files that are skipped whole because their names say they hold secrets."""

from __future__ import annotations

import re

_ENV_TEMPLATE_WORDS = frozenset({"example", "sample", "template", "dist"})
_ENV_VARIANT = re.compile(r"\.env[._-]")  # .env.local, .env_prod, .env-staging
_SECRET_NAME = re.compile(
    r"""(?x)
    .*\.(?:pem|key|p12|pfx|keystore|jks|ppk)              # .ppk: PuTTY's private keys
    | .*\.tfstate(?:\.backup)?                           # Terraform state: every resource's secrets, in clear
    | id_(?:rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk)
    | \.npmrc | \.pypirc | \.netrc | _netrc
    | \.pgpass | pgpass\.conf | \.git-credentials | \.my\.cnf | \.htpasswd
    | \.terraformrc | terraform\.rc | credentials\.tfrc\.json   # Terraform's API tokens
    | \.vault-token | \.boto | \.s3cfg | \.dockercfg | \.pgpass\.conf
    | \.erlang\.cookie                                   # an Erlang node's distribution cookie
    | \.p4tickets | p4tickets\.txt                        # Perforce's login tickets
    | \.msmtprc | \.fetchmailrc | \.authinfo             # mail clients' passwords (msmtp, fetchmail, Gnus)
    | \.renviron                                        # R's environment file, a .env
    | \.cdsapirc | \.ecmwfapirc                          # the Copernicus and ECMWF data APIs' keys
    | \.sentryclirc                                     # sentry-cli's auth token
    | settings-security\.xml                            # Maven's master password
    | accesstokens\.json                                # the Azure CLI's tokens
    | \.databrickscfg | rclone\.conf | \.smbcredentials  # Databricks' tokens, rclone's remotes, a CIFS mount's
    | key\.properties | keystore\.properties             # an Android or Flutter app's signing passwords
    | kubeconfig | .*\.kubeconfig                       # cluster credentials at a kubeconfig's own name
    | credentials                                       # AWS's shared credentials file (~/.aws/credentials)
    | (?:.*[._-])?credentials.*\.json                    # gcloud's application_default_credentials.json, ...
    | client_secrets?.*\.json                            # Google OAuth client files
    """,
    re.IGNORECASE,
)
# generic names that hold secrets only in their tool's folder: docker's auths, a cluster's kubeconfig,
# the GitHub and hub CLIs' tokens, cargo's and composer's tokens, Maven's and Gradle's user settings,
# doctl's, fly's and the CircleCI CLI's tokens, Leiningen's and Helm's repository passwords
_SECRET_IN_FOLDER = frozenset(
    {
        (".docker", "config.json"),
        (".kube", "config"),
        ("gh", "hosts.yml"),
        (".config", "hub"),
        (".cargo", "credentials.toml"),
        (".composer", "auth.json"),
        ("composer", "auth.json"),
        (".m2", "settings.xml"),
        (".gradle", "gradle.properties"),
        ("doctl", "config.yaml"),
        (".fly", "config.yml"),
        (".circleci", "cli.yml"),
        (".lein", "profiles.clj"),  # Leiningen's repository credentials
        ("helm", "repositories.yaml"),  # Helm's chart repositories' passwords
        (".snowsql", "config"),  # SnowSQL's connections
        (".kaggle", "kaggle.json"),  # Kaggle's API key
        ("huggingface", "token"),  # the Hugging Face CLI's token
    }
)


def is_secret_file(relpath: str) -> bool:
    """Tell whether a file is excluded by default because its name says it holds secrets."""
    folder, _, name = relpath.rstrip("/").lower().rpartition("/")
    if (folder.rpartition("/")[2], name) in _SECRET_IN_FOLDER:
        return True
    if name in (".env", ".envrc"):  # .envrc: direnv's, exports secrets like .env
        return True
    if _ENV_VARIANT.match(name):
        # .env.local, .env_prod, .env-staging are secret; .env.example, .env.local.sample, ... are templates
        return _ENV_TEMPLATE_WORDS.isdisjoint(re.split(r"[._-]", name[5:]))
    if name.endswith(".pem") and _PUBLIC_PEM.search(name[:-4]):
        return False  # public.pem, ca.pem, fullchain.pem: read, and a private key block in one still redacted
    return _SECRET_NAME.fullmatch(name) is not None


_PUBLIC_PEM = re.compile(r"(?:^|[._-])(?:public|pub|cert|certificate|ca|chain|fullchain|bundle)(?:$|[._-])")
