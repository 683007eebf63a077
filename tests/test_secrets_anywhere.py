"""Secrets by default: a value that looks generated is redacted wherever it stands, with no name
beside it, and what is public by its structure stays. Fakes are assembled from parts, as in
test_secrets."""

from __future__ import annotations

import base64
import random
import string

import pytest

from rag.secrets import find_secrets, redact

TOKEN = "Xk9mQ2vLp4" + "Rt7Zq8mN3pL7wB5c"  # 26 random letters and digits
B64 = "/wp+qTKueLft" + "vvysV53K8jBATufzv356x18U9VAr3OI="  # base64 of 32 bytes
HEX = (
    "9e1f04a7c3d2" + "b8e5f6a1c0d9e8b7a6f5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3"[:52]
)  # 64 hex digits
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(40))).decode()
SSH_KEY = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 " + bytes(range(100, 132))).decode()
KEY32 = base64.b64decode(B64)  # 32 bytes as random as a key's
SPKI = base64.b64encode(
    bytes.fromhex("302a300506032b6570032100") + KEY32
).decode()  # an Ed25519 public key, DER
PKCS8 = base64.b64encode(
    bytes.fromhex("302e020100300506032b657004220420") + KEY32
).decode()  # its private key
MINISIGN = base64.b64encode(b"Ed" + KEY32[:8] + KEY32).decode()
SALT = base64.b64encode(KEY32[:20]).decode()  # 28 characters, as known_hosts hashes them
VAPID = base64.urlsafe_b64encode(b"\x04" + KEY32 + KEY32[::-1]).decode().rstrip("=")  # a P-256 point

# (text, the secret that must disappear, id): no credential word anywhere
ANYWHERE = [
    (f'client = Client("{TOKEN}")', TOKEN, "a-constructor-argument"),
    (f"# temporary: {TOKEN} (remove before release)", TOKEN, "a-comment"),
    (f"deploy --region eu-west-1 {TOKEN} --force", TOKEN, "a-positional-argument"),
    (f"id,owner,value\n7,ops,{B64}\n", B64, "a-csv-cell"),
    (f'seed: "{HEX}"', HEX, "a-hex-seed"),
    (f"k = bytes.fromhex('{HEX}')", HEX, "hex-key-material"),
    (f"Connected with {TOKEN}.\n", TOKEN, "prose-in-a-log"),
    (f"services/{TOKEN}/hook", TOKEN, "a-url-path-part"),
    (f'k = "{PKCS8}"', PKCS8, "a-private-key-in-der"),
    (
        'signtool sign /f cert.pfx /p "Harbor-Quill-Marigold-47" app.exe',
        "Quill-Marigold",
        "a-memorable-password",
    ),
    ('CONNECT ro/"Lintel#Fjord-83"@(DESCRIPTION=...)', "Lintel#Fjord", "a-memorable-password-with-a-symbol"),
    ("rabbitmqctl add_user etl 'Hq7Rv.w2KfN9xPz.4Tj'", "w2KfN9xPz", "a-password-with-dots"),
    ("Set-Variable -Name Ilo -Value 'rT4kWqLm_Zp2XvNb'", "rT4kWqLm", "sixteen-characters-with-a-symbol"),
    ('modem.join(ssid, "B4rnOwl!Nest")', "B4rnOwl", "a-leetspeak-password"),
    ('schtasks /create /ru svc /rp "Autumn2031!" /sc daily', "Autumn2031", "a-word-a-year-and-a-symbol"),
    ('user = "svc-metrics:C4ndle-Wax-Melt"', "C4ndle", "a-leetspeak-password-after-its-user"),
    ("curl -su deploy:M4ngo!Tree https://ci.example.com/hook", "M4ngo", "a-bare-leetspeak-password"),
    (f'Client.new("acme_live_{HEX[:40]}")', HEX[:40], "a-hex-key-after-its-vendor-and-mode"),
    (
        'client = Client("app-user", "xK9#mQ2$vL7@pR4!")',
        "xK9#mQ2$vL7@pR4!",
        "a-generated-password-with-symbols",
    ),
    (
        "the shared VPN account: Harbor7Lumen! for now.",
        "Harbor7Lumen",
        "a-chosen-password-closing-with-a-bang",
    ),
    (
        f'var credential = new StorageSharedKeyCredential("archive", "{base64.b64encode(KEY32 + KEY32[::-1]).decode()}");',
        base64.b64encode(KEY32 + KEY32[::-1]).decode(),
        "a-key-of-a-digests-length-after-a-name-that-holds-sha",
    ),
    (
        "-NewPassword (ConvertTo-SecureString -AsPlainText 'Hx@kTb@nQ@WERMY*pqz7' -Force)",
        "Hx@kTb@nQ@WERMY*pqz7",
        "a-generated-password-in-a-call",
    ),
    (
        "open relay.example.net\nuser batch\nVq3Tz_RwKm8Lx\nbinary\n",
        "Vq3Tz_RwKm8Lx",
        "a-short-password-on-stdin",
    ),
    ("conn = open_feed('etl', 'mH7vQ2xK9pL4rT')", "mH7vQ2xK9pL4rT", "a-short-generated-argument"),
    (
        'String k = "8QwLz3Tf"\n    + "_TfRk29V"\n    + "pNx7HcYe4m";',
        "_TfRk29V",
        "literals-joined-by-a-leading-plus",
    ),
    ("$k = -join @('Rw7tKp2Qz', 'X9mLf4Vb8Nc', 'Y3sh')", "X9mLf4Vb8Nc", "a-powershell-join"),
    ("const k = ['Rw7tKp2Qz', 'X9mLf4Vb8Nc', 'Y3sh'].join('');", "X9mLf4Vb8Nc", "a-javascript-join"),
    ('k = "".join(["Rw7tKp2Qz", "X9mLf4Vb8Nc", "Y3sh"])', "X9mLf4Vb8Nc", "a-python-join"),
    ('p.stdin.write(b"Vq3Tz9RwKm8L\\n")', "Vq3Tz9RwKm8L", "a-short-password-written-to-stdin"),
    ('send "Vq3Tz9RwKm8L\\r"', "Vq3Tz9RwKm8L", "a-short-password-sent-by-expect"),
    ("7\tops\tVq3Tz9RwKm8L\t2031\n", "Vq3Tz9RwKm8L", "a-short-value-in-a-tab-separated-row"),
    ("conn(&apos;etl&apos;, &apos;mH7vQ2xK9pL4rT&apos;)", "mH7vQ2xK9pL4rT", "a-short-value-quoted-in-xml"),
    ('var k = string.Join("", "Rw7tKp2Qz", "X9mLf4Vb8Nc", "Y3sh");', "X9mLf4Vb8Nc", "a-csharp-join"),
]


@pytest.mark.parametrize(("text", "secret"), [c[:2] for c in ANYWHERE], ids=[c[2] for c in ANYWHERE])
def test_a_generated_value_is_redacted_wherever_it_stands(text: str, secret: str) -> None:
    redacted, counts = redact(text)
    assert secret not in redacted and counts == {"random-value": 1}, redacted


def test_only_the_random_parts_of_a_url_path_go() -> None:
    redacted, _ = redact(f"https://hooks.example.com/services/{TOKEN}/hook")
    assert redacted == "https://hooks.example.com/services/[REDACTED:random-value]/hook"


def test_a_byte_array_of_random_bytes_is_key_material() -> None:
    rng = random.Random(7)
    key = ", ".join(f"0x{rng.randrange(256):02x}" for _ in range(32))
    signed = ", ".join(str(rng.randrange(-128, 128)) for _ in range(16))
    for text in (f"var key = []byte{{{key}}}", f"byte[] k = new byte[] {{ {signed} }};"):
        redacted, counts = redact(text)
        assert (
            counts == {"random-value": 1} and "0x" not in redacted.split("{")[1] and "[REDACTED" in redacted
        )
    # a table of small or ordered numbers is data
    for text in (
        "primes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53]",
        f"t = {{{', '.join(map(str, range(20)))}}}",
    ):
        assert redact(text) == (text, {})


# what stays, though it looks random: (text, id)
PUBLIC = [
    ("lhs.MultiplyByFiveToTheNth(exact_exponent);", "a-name-of-words"),
    ("typedef struct RedisModuleKeyOptCtx RedisModuleKeyOptCtx;", "a-name-with-abbreviations"),
    ("implicit def m = cats.instances.map.catsStdMonoidKForMap[K]", "a-name-with-a-project-word"),
    ("commit 3f786850e387550fdab836ed7e6dc881de23001b", "a-git-object-id"),
    (f'checksum = "{HEX}"', "a-digest-in-a-checksum-field"),
    (f"- name: ETAG\n  value: {HEX}\n", "a-digest-named-on-the-line-above"),
    (f"file,sha256\napp.tar.gz,{HEX}\n", "a-digest-in-its-column"),
    ('"integrity": "sha512-' + B64 + '"', "an-integrity-hash"),
    ("h1:" + B64, "a-go-sum-hash"),
    ('id = "123e4567-e89b-12d3-a456-426614174000"', "a-uuid"),
    (f'logo = "data:image/png;base64,{PNG}"', "an-image-in-a-data-uri"),
    (f"icon: {PNG}", "an-image-as-base64"),
    (f"ssh-ed25519 {SSH_KEY} me@host", "an-ssh-public-key"),
    (f"-----BEGIN CERTIFICATE-----\n{B64}\n{B64}\n-----END CERTIFICATE-----\n", "a-certificate"),
    ("aws_docs = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'", "an-example"),
    ("0xa163ff802a3426a8U, 0xc9bcff6034c13052ULL,", "numeric-constants"),
    ('d = "P3Y6M4DT12H30M5S"', "an-iso-duration"),
    (
        "https://github.com/ziglang/zig/blob/14fc4d481151d6ac0fb433d625cc97b4c2fe3eba/lib/std/x.zig",
        "a-sha-in-a-url",
    ),
    (
        'clientId: "297663736242-j9gdmjcczkomlye6bk162ny4v3yo98fm.apps.googleusercontent.com"',
        "an-oauth-client-id",
    ),
    ("publishable = 'pk_live_51HqL2eKx9Zb7Vm3Np4Rt8Wy'", "a-publishable-key"),
    ('build = "9f86d081884c7d65"', "short-hex-is-an-id"),
    ("PuTTY-User-Key-File-2: ssh-rsa", "a-name-with-separators"),
    ('EXPECT_TRUE(Demangle("_Z1fIJilEE1SIXfLooLb0EeqstT_Li4EEEDpS1_", tmp));', "a-mangled-cpp-symbol"),
    ('EXPECT_TRUE(Demangle("_Z1fIiEDTgsdafp_EPT_", tmp));', "a-mangled-symbol-named-first"),
    ('ASSERT_TRUE(Demangle("_ZNK3$_0clIiEEDaT_QeqplLi2ELi2ELi4E", tmp));', "a-mangled-symbol-after-a-dollar"),
    ("<key>PublicAPIKey</key>\n<string>appl_Qm7rTz2KpX9vLw4NcB8yHd3s</string>", "a-property-list-public-key"),
    (f'p = "{SPKI}"', "a-public-key-in-der"),
    (f'private const val PLAY_LICENSE_KEY =\n    "{SPKI}"', "a-public-key-in-der-under-a-key-name"),
    (f'echo "{HEX}  steamcmd_linux.tar.gz" | sha256sum -c', "a-checksum-line"),
    (f'"version": "{HEX[:40]}",\n"sum": "{B64}"', "a-base64-digest-under-its-name"),
    (f'.hash = "1220{HEX}",', "a-multihash"),
    (f"api_secret: ENC[AES256_GCM,data:{B64},iv:{B64[:22]}==,type:str]", "a-sops-value"),
    (f"SENTRY_AUTH_TOKEN: Encrypted({B64})", "an-encrypted-value"),
    (
        'deps = {"router": "vue-router-42", "os": "Windows-Server-2019", "h": "X-Frame-Options"}',
        "words-and-numbers",
    ),
    (f'-- RFC 8032 section 7.1, TEST 1 (known-answer test)\nseed = "{HEX}"', "a-test-vector-marked-above"),
    (f'rfc7515Key = "{TOKEN}"', "a-test-vector-named-as-one"),
    ("# public key: age1mfq8dnqjf9q60dhxrx9wnzv7jwksmlw9g3wlhyghe3shdmx889tahvym7x", "a-public-key-in-prose"),
    (
        "static const uint8_t SIGNER_PUBKEY[32] = {" + ", ".join(f"0x{b:02x}" for b in KEY32) + "};",
        "a-public-key-as-bytes",
    ),
    (f"untrusted comment: minisign public key\n{MINISIGN}\n", "a-minisign-public-key"),
    (
        "The ABI is pinned on IPFS: `ipfs://bafybeivubaqwamxibarvv5fxyxwmst2vopwy7hry3z7tazowt2bsaqz64a`.",
        "an-ipfs-content-id",
    ),
    (f"|1|{SALT}|{SALT}" + " ssh-ed25519 AAAA", "a-hashed-known-hosts-entry"),
    (f"_443._tcp.www IN TLSA 3 1 1 {HEX}", "a-dns-tlsa-digest"),
    ('TXT "google-site-verification=uUKfuwGyKrG4M8vr1c8nnjV6TBQGrwjpDYSno7KLIp"', "a-site-verification"),
    ("CF-RAY: 8a7f3c2e9b1d4a06-LIS\nx-amz-id-2: " + B64, "request-ids-in-response-headers"),
    (f"Acme-Signature: t=1718093221,v1={HEX}", "a-signature-header"),
    (f'dsn: "https://{HEX[:32]}@o450715162865279.ingest.sentry.io/4507151628"', "a-sentry-dsn"),
    ('posthog.init("phc_RLOPu1X4c8E07PP4Miq6axXvuRhmGiKOmQdL6Jjyc")', "a-posthog-project-key"),
    (
        "DKIM-Signature: v=1; a=rsa-sha256; d=x.io; s=g;\n\th=to:subject;\n\tbh=" + B64 + "\n",
        "a-dkim-body-hash",
    ),
    ("  db:password:\n    secure: v1:PrK44JDl3Q6D7SkM:" + B64 + "\n", "a-versioned-ciphertext"),
    ('EXPECT_DEMANGLING("_RNvYDNtC1c1tNtNtC3std6marker4SendEL_NtC1d1u1f", "x");', "a-mangled-rust-symbol"),
    ("set_3d = void_output(lgdal.OGR_G_Set3D, [c_void_p])", "a-dotted-name-of-code"),
    ("trait CoflatMapSyntax extends CoflatMap.ToCoflatMapOps", "a-dotted-name-of-camel-case-words"),
    ("cdn = https://d1k2v9x7q4r8zt.cloudfront.net/Main2Bundle.min.js", "a-dotted-host-and-file"),
    (f"mail.pass=ENC({B64})", "a-jasypt-encrypted-value"),
    (f'subscribe(urlBase64ToUint8Array("{VAPID}"))', "a-web-push-public-key"),
    ('label = "Release-2024-Final"', "a-name-a-year-no-symbol"),
    ('if (strchr("diouxXeEfFgGaAcs%", *cur)) {', "a-format-set-of-letters"),
    ("psql -h app.cluster-q7m2xkz9vbn4wt8rc3yh5pd6.eu-west-1.rds.amazonaws.com -U app", "a-host-name-label"),
    ("Quote the request id (e.g. `01JB7W4XK2M9QZ5T8R3V6N1PYD`) when you report a bug.", "a-ulid"),
    ("endpoint=we_1QbXr7LmN2pKd9TzVy4Hc8Ws msg=retry", "a-stripe-webhook-endpoint-id"),
    ('q = "utm_source%3Dnews%26page%3D2"', "url-escapes-with-words"),
    ("mail ops@example.com; see Processor.Type#X86; if a!=b1 and Hello@World2024", "bare-words-with-symbols"),
    (
        f'{{"name": "cf-ray", "value": "{HEX[:16]}-LHR"}}, {{"name": "x-request-id", "value": "{TOKEN}"}}',
        "har-ids",
    ),
    (f'<meta name="google-site-verification" content="{TOKEN}-VP_4bI" />', "a-site-verification-meta-tag"),
    ("class Sha384(MySqlSha2Mixin, Transform):", "a-short-class-name"),
    ('opts = {"Rds2KmsKeyId": 1, "Tx9Lq4Wm2Zp7K": 2}', "short-keys"),
    ("limits = vpc/L-7FA2B9C0 and ec2/L-1C4E8D2A", "short-quota-codes"),
    ('etag = "Kq8vZ2mWx4Ts="', "a-short-etag"),
    ('assert b64("Hello there") == "SGVsbG8gdGhlcmU"', "short-base64-of-text"),
    ('key = "Tk3Wq9%sZr2X" % user', "a-short-format"),
    ('names = ", ".join(["alpha", "beta"])', "a-join-of-words"),
    ("cols = ['userId', 'createdAt', 'accountName'].join(',')", "a-join-of-names"),
    ('truck = Truck(vin="TXNSNHV74K9AUB8MN")', "a-vehicle-id-with-its-check-digit"),
    (
        "  API_TOKEN: ENC[AES256_GCM,data:xl2ppDwshfBoc2IkKWbgJzNsqCww7Cg2i+M+sxzO,"
        "iv:fnDxzkbEBhEa/RS33TyD+hzxMEuYLwj4tNQAH/ZKDQQ=,tag:ei3uOsfzNEV6hWssUlRMDA==,type:str]",
        "a-sops-encrypted-value",
    ),
    (
        "id\tsealed\n7\tvault:v1:xl2ppDwshfBoc2IkKWbgJzNsqCww7Cg2i+M+sxzO\n",
        "a-vault-transit-ciphertext",
    ),
    ('ids = ",".join(["i-0a1b2c3d4e", "i-9f8e7d6c5b"])', "a-list-joined-by-commas"),
    ("export { uint8x16ToI32, int16x8ToF32 } from './simd';", "short-identifiers-in-code"),
    ("enum Suite { kAesGcm128V2, kSha3W512Xy }", "short-enum-members"),
    ("Connect client/server, then connect Jenkins/GitHub.\nconnect client/server\n", "connect-in-prose"),
]


@pytest.mark.parametrize("text", [c[0] for c in PUBLIC], ids=[c[1] for c in PUBLIC])
def test_what_is_public_by_its_structure_stays(text: str) -> None:
    assert redact(text) == (text, {})


def test_random_strings_are_never_taken_for_names_of_words() -> None:
    rng = random.Random(11)
    alphabet = string.ascii_letters + string.digits
    values = ["".join(rng.choice(alphabet) for _ in range(n)) for n in (16, 24, 40) for _ in range(300)]
    missed = [v for v in values if redact(f"x({v})")[1] != {"random-value": 1}]
    assert len(missed) <= len(values) // 100, missed[:5]  # at most 1 in 100 looks like a name or too plain


def test_letters_of_one_case_with_few_digits_are_random_when_they_read_as_no_word() -> None:
    # a key of lower-case letters with three digits: too few class switches to pass as random alone
    key = "xke1lrqhnph6" + "xlvhidazvjeomwnb3jjd"
    assert redact(f'api_key <- "{key}"\n') == (
        'api_key <- "[REDACTED:api-key-assignment]"\n',
        {"api-key-assignment": 1},
    )
    assert redact(f"x({key})") == ("x([REDACTED:random-value])", {"random-value": 1})
    rng = random.Random(5)
    keys = []
    for _ in range(300):  # 24 lower-case letters, three of them made digits
        chars = [rng.choice(string.ascii_lowercase) for _ in range(24)]
        for at in rng.sample(range(24), 3):
            chars[at] = rng.choice(string.digits)
        keys.append("".join(chars))
    missed = [v for v in keys if redact(f"x({v})")[1] != {"random-value": 1}]
    assert len(missed) <= 40, (len(missed), missed[:5])  # 30 of 300 are missed; 81 by class switches alone
    for name in ("xmlhttprequestupload", "strncpyloopbuffersize", "configurationmanagers"):
        assert redact(f"x({name})") == (f"x({name})", {}), name  # made of words, or vowels enough


def test_a_kind_named_by_its_context_wins_over_the_default() -> None:
    text = "'https://hooks.slack.com/services/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'"
    assert [f.kind for f in find_secrets(text)] == ["slack-webhook"]


@pytest.mark.parametrize(
    "text",
    [
        'pub const VERIFYING_KEY_HEX: &str = "0e03135a751965d8e3e82bda962445979d298c527354070fec0e9c9e8a91f3d2";\n',
        'Header always set X-Build-Id "b3875-b72d965b3156"\n',
        '"m_10442","Oakleaf Home","acct_1NbVq6IcRCqCkblO","active"\n',
        'event = "evt_1Nv0FGQ9Xy7pLmKj3aBcDeFg"\n',
        "vendor,owner,app_name,client_id,secret_ref\n"
        "mailer,payments,receipts,Rm3Wq8ZtLx2NvK7pHd9Yc4,vault-mailer\n"
        "metrics,platform,ingest,Zr8kq2LmN0pX4sTvWc3Jq1,vault-metrics\n",  # (rows that read as headers)
        "  activeKid: Tq5Bn8Wc2ZxL7vKd3MpR9h\n",
    ],
    ids=[
        "verifying-key",
        "header-id-after-a-blank",
        "stripe-account-id",
        "stripe-event-id",
        "client-id-column",
        "json-web-key-id",
    ],
)
def test_public_values_named_or_shaped_as_public_stay(text: str) -> None:
    assert redact(text) == (text, {})


def test_under_a_credential_name_a_public_shape_or_name_does_not_count() -> None:
    for text in (
        f'{{"name": "x-api-key", "value": "{TOKEN}"}}',
        f"- name: DB_PASSWORD\n  value: {TOKEN}\n",
        'pub const SIGNING_KEY_HEX: &str = "0e03135a751965d8e3e82bda962445979d298c527354070fec0e9c9e8a91f3d2";\n',
        'Header set X-Api-Key "b3875b72d965b3156aQ9xZ"\n',
        'let token: string = "aB3dE5fG7hJ9kL1mN3pQ5r";\n',
        "vendor,owner,session_id\nmailer,payments,Rm3Wq8ZtLx2NvK7pHd9Yc4\n",
        'token = "q7m2xkz9vbn4wt8rc3yh5pd6.a.example.com"\n',  # a host's label under a token's name
    ):
        assert redact(text)[1], text


def test_a_value_written_again_in_another_form_is_a_name_or_a_test_input() -> None:
    cases = {
        # a constant's name in upper case beside the value
        '{ NETLIB_XQP521R7HYBRID1024, "XqP521r7HYBRID1024" },\n': "XqP521r7HYBRID1024",
        # a test's valid id and its invalid neighbours: characters added, changed, case changed
        'ok("ckq7x2bn0001p8rtzjw4m9e5h");\nbad("9ckq7x2bn0001p8rtzjw4m9e5hQQQ");\n': "9ckq7x2bn0001p8rtzjw4m9e5hQQQ",
        'ok("vr7c21qqep55kdh8wmtxn3zb");\nbad("vr7c21qqep55kdh-wmtxn3zb");\n': "vr7c21qqep55kdh-wmtxn3zb",
        'ok("01HV8Q2M7TZK4B9XW3NC6PDRFE");\nok("01hv8Q2m7TzK4b9XW3nc6PDRfe");\n': "01hv8Q2m7TzK4b9XW3nc6PDRfe",
        # its letters and digits alone, as the test expects them back
        'expect(slugify("Sunny@Day#2024")).toEqual("sunnyday2024");\n': "Sunny@Day#2024",
        # two parts that begin alike
        "// http://manuals.example.net/topic/com.vend.doc.qvw0071k/QVW0071K_gcx_3_0.pdf\n": "qvw0071k",
        "// we'll return kuint32max/kuint32min instead.\n": "kuint32max",
    }
    for text, value in cases.items():
        assert redact(text) == (text, {}), value
    # alone, each is random enough to be redacted
    for value in (
        "XqP521r7HYBRID1024",
        "9ckq7x2bn0001p8rtzjw4m9e5hQQQ",
        "01hv8Q2m7TzK4b9XW3nc6PDRfe",
        "Sunny@Day#2024",
    ):
        assert redact(f'x = "{value}"\n')[1], value


def test_a_secret_written_twice_the_same_way_or_beside_a_different_one_stays_redacted() -> None:
    other = "Qw8eRt5yUi2oPa9sDf4gHj7k"  # as random, no part in common
    for text in (
        f'a = "{TOKEN}"\nb = "{TOKEN}"\n',
        f"Authorization: Bearer {TOKEN}\ncurl -H 'X-Token: {TOKEN}'\n",
        f'a = "{TOKEN}"\nb = "{other}"\n',
        'pw = "Summer2024!x"\nold = "Winter2023!"\n',
    ):
        found = redact(text)[0]
        assert TOKEN not in found and "Summer2024" not in found and other not in found, text


def test_a_letter_that_lowers_to_two_does_not_move_where_a_token_is_looked_for() -> None:
    # `İ` is two characters in lower case: a token after it must not seem written elsewhere
    text = f"# İstanbul İçin İzmir İ\nx = [{TOKEN}]\n"
    assert TOKEN not in redact(text)[0]


# a secret split over names assigned once and joined again: each literal goes; names joined into a URL stay
@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        (
            '_HOOK_A = "whsec_7Fq2ZkLmNpR"\n_HOOK_B = "xT4vW9cYbQ3sJ8dHgK2"\nSECRET = _HOOK_A + _HOOK_B\n',
            ["whsec_7Fq2ZkLmNpR", "xT4vW9cYbQ3sJ8dHgK2"],
        ),
        (
            "notify() {\n  local a='xoxb-902164735210-4417' b='302958176-Zq8kLmN2pRxT4vW9cYbQ3sJd'\n"
            '  curl -H "Authorization: Bearer ${a}${b}" https://slack.example.com/api\n}\n',
            ["xoxb-902164735210-4417", "302958176-Zq8kLmN2pRxT4vW9cYbQ3sJd"],
        ),
    ],
    ids=["constants-added", "shell-variables-side-by-side"],
)
def test_a_secret_split_over_names_and_joined_again_is_redacted(text: str, pieces: list[str]) -> None:
    redacted, _ = redact(text)
    assert not any(piece in redacted for piece in pieces), redacted


def test_names_joined_into_a_url_stay() -> None:
    text = 'BASE = "https://api.example.com/v2"\nROUTE = "/users/42/orders"\nURL = BASE + ROUTE\n'
    assert redact(text) == (text, {})


def test_a_token_written_on_every_line_is_redacted_on_each() -> None:
    # 3,000 copies: each copy once looked through all the others for a variant (minutes here)
    text = f"    k: {TOKEN}\n" * 3000
    redacted, found = redact(text)
    assert found == {"random-value": 3000} and TOKEN not in redacted


def test_a_credentials_literals_joined_by_plus_go_with_it() -> None:
    text = 'String DB_PASS = "Kx7mQ2vR"\n    + "t9Lw4Zp8"\n    + "Hn3YcW5j";\n'
    redacted, counts = redact(text)
    assert redacted == 'String DB_PASS = "[REDACTED:password-assignment]\n\n";\n'
    assert counts == {"password-assignment": 1}


def test_short_random_values_are_redacted_as_the_longer_ones_are() -> None:
    rng = random.Random(12)
    alphabet = string.ascii_letters + string.digits
    values = ["".join(rng.choice(alphabet) for _ in range(n)) for n in (12, 13, 14, 15) for _ in range(200)]
    mixed = [
        v
        for v in values
        if sum(map(str.isupper, v)) >= 2 and sum(map(str.islower, v)) >= 2 and any(map(str.isdigit, v))
    ]
    missed = [v for v in mixed if redact(f'x("{v}")')[1] != {"random-value": 1}]
    assert len(missed) <= len(mixed) // 10, missed[:5]  # runs of one class as long as a name's: kept


def test_a_vehicle_id_keeps_only_with_its_check_digit() -> None:
    assert redact('truck = Truck(vin="TXNSNHV70K9AUB8MN")')[1] == {"random-value": 1}  # 4 is its check digit
    iv = "iv:fnDxzkbEBhEa/RS33TyD+hzxMEuYLwj4tNQAH/ZKDQQ="  # a sops field's name outside its ENC[...]
    assert redact(iv)[1] == {"random-value": 1}
