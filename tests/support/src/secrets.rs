//! Planted secrets for the redaction tests: one case per kind of credential, each a
//! snippet of the file it would live in, with the values that must never be shown; and
//! benign look-alikes that must come through unchanged.
//!
//! Every value is generated at run time from a seeded generator, so this source holds
//! no secret-shaped literal (prefixes are split so scanners see none whole either) and
//! no value is real.

/// A planted secret: where it lives and what must not leak.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Case {
    pub kind: &'static str,
    /// The extension of a file it would live in (`yaml`, `py`, `xml`).
    pub ext: &'static str,
    pub text: String,
    /// Substrings that must not appear after redaction (for a key, its body lines).
    pub values: Vec<String>,
}

/// A benign look-alike: high-entropy or secret-named, but no secret.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Benign {
    pub kind: &'static str,
    pub ext: &'static str,
    pub text: String,
}

/// splitmix64: small, seeded, good enough to make values no one has seen.
pub struct Gen(u64);

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &[u8] = b"0123456789";

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn from(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| alphabet[(self.next_u64() % alphabet.len() as u64) as usize] as char)
            .collect()
    }

    pub fn alnum(&mut self, n: usize) -> String {
        let alphabet: Vec<u8> = [LOWER, UPPER, DIGITS].concat();
        self.from(&alphabet, n)
    }

    pub fn lower_alnum(&mut self, n: usize) -> String {
        self.from(&[LOWER, DIGITS].concat(), n)
    }

    pub fn upper_alnum(&mut self, n: usize) -> String {
        self.from(&[UPPER, DIGITS].concat(), n)
    }

    pub fn hex(&mut self, n: usize) -> String {
        self.from(b"0123456789abcdef", n)
    }

    pub fn digits(&mut self, n: usize) -> String {
        let first = self.from(b"123456789", 1);
        first + &self.from(DIGITS, n - 1)
    }

    pub fn letters(&mut self, n: usize) -> String {
        self.from(&[LOWER, UPPER].concat(), n)
    }

    pub fn base64(&mut self, n: usize) -> String {
        self.from(&[UPPER, LOWER, DIGITS, b"+/"].concat(), n)
    }

    pub fn base64url(&mut self, n: usize) -> String {
        self.from(&[UPPER, LOWER, DIGITS, b"-_"].concat(), n)
    }

    /// A password people choose: letters, digits and a symbol, `len` long.
    pub fn password(&mut self, len: usize) -> String {
        let mut out = self.letters(len - 2);
        out.push_str(&self.digits(1));
        out.push(['!', '#', '%', '*', '^'][(self.next_u64() % 5) as usize]);
        out
    }

    pub fn uuid(&mut self) -> String {
        format!(
            "{}-{}-4{}-a{}-{}",
            self.hex(8),
            self.hex(4),
            self.hex(3),
            self.hex(3),
            self.hex(12)
        )
    }

    /// A BIP-39-style recovery phrase: `n` words from a list of common ones.
    pub fn mnemonic(&mut self, n: usize) -> String {
        const WORDS: &[&str] = &[
            "abandon", "ability", "absorb", "access", "across", "actor", "adapt", "admit",
            "advice", "afford", "agent", "alarm", "album", "alley", "amber", "anchor", "angle",
            "apple", "arena", "armor", "arrow", "asset", "autumn", "bacon", "banner", "barrel",
            "beach", "bench", "bitter", "blanket", "border", "bottom", "brave", "bridge", "bronze",
            "cabin", "cactus", "canal", "carbon", "castle", "cherry", "chimney", "circle",
            "clever", "cloud", "coconut", "copper", "coral", "cradle", "crystal", "dolphin",
            "donkey", "dragon", "eagle", "ember", "fabric", "falcon", "garlic", "harbor", "island",
            "jungle", "lantern", "meadow", "velvet",
        ];
        (0..n)
            .map(|_| WORDS[(self.next_u64() % WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Key body lines: `lines` lines of `width` base64 characters, then a short one.
    pub fn key_body(&mut self, lines: usize, width: usize) -> Vec<String> {
        let mut body: Vec<String> = (0..lines).map(|_| self.base64(width)).collect();
        body.push(self.base64(24) + "==");
        body
    }
}

fn cat(parts: &[&str]) -> String {
    parts.concat()
}

/// A key block of `kind` (`RSA`, `OPENSSH`, ``) with its body lines.
fn pem_block(g: &mut Gen, kind: &str, width: usize) -> (String, Vec<String>) {
    let label = if kind.is_empty() {
        cat(&["PRIVATE", " KEY"])
    } else {
        format!("{kind} {}", cat(&["PRIVATE", " KEY"]))
    };
    let body = g.key_body(10, width);
    let text = format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        body.join("\n")
    );
    (text, body)
}

/// Every planted kind (more than 60), generated from `seed`.
pub fn cases(seed: u64) -> Vec<Case> {
    let g = &mut Gen::new(seed);
    let mut out = Vec::new();
    let mut add = |kind: &'static str, ext: &'static str, text: String, values: Vec<String>| {
        out.push(Case {
            kind,
            ext,
            text,
            values,
        });
    };

    // Key blocks.
    let (text, body) = pem_block(g, "RSA", 64);
    add("rsa private key", "txt", text, body);
    let (text, body) = pem_block(g, "OPENSSH", 70);
    add("openssh private key", "txt", text, body);
    let (text, body) = pem_block(g, "EC", 64);
    add("ec private key", "txt", text, body);
    let (text, body) = pem_block(g, "", 64);
    add("pkcs8 private key", "txt", text, body);
    let (text, body) = pem_block(g, "ENCRYPTED", 64);
    add("encrypted pkcs8 private key", "txt", text, body);
    let (text, body) = pem_block(g, "DSA", 64);
    add("dsa private key", "txt", text, body);
    {
        let body = g.key_body(8, 64);
        let label = cat(&["PGP PRIVATE", " KEY BLOCK"]);
        let checksum = format!("={}", g.base64(4));
        let text = format!(
            "-----BEGIN {label}-----\nVersion: GnuPG v2\nComment: deploy signing key\n\n{}\n{checksum}\n-----END {label}-----\n",
            body.join("\n")
        );
        add("pgp private key (armored)", "asc", text, body);
    }
    {
        let body = g.key_body(6, 64);
        let label = cat(&["RSA PRIVATE", " KEY"]);
        let text = format!(
            "-----BEGIN {label}-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{}\n\n{}\n-----END {label}-----\n",
            g.hex(32).to_uppercase(),
            body.join("\n")
        );
        add("encrypted pem private key", "txt", text, body);
    }
    {
        let body = g.key_body(8, 64);
        let label = cat(&["RSA PRIVATE", " KEY"]);
        let escaped = body.join("\\n");
        let text = format!(
            "{{\n  \"type\": \"service_account\",\n  \"private_key_id\": \"{}\",\n  \"private_key\": \"-----BEGIN {label}-----\\n{escaped}\\n-----END {label}-----\\n\",\n  \"client_email\": \"ci@example.iam.gserviceaccount.com\"\n}}\n",
            g.hex(40)
        );
        let mut values = body;
        values.push(escaped);
        add("service account json private key", "json", text, values);
    }
    {
        // The key's id alone, in a service-account file whose key was cut out: 40 hex,
        // a secret only after its JSON key (a bare 40-hex string is a commit id).
        let id = g.hex(40);
        let text = format!(
            "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"shop-prod-4412\",\n  \"private_key_id\": \"{id}\",\n  \"client_email\": \"ci@shop-prod-4412.iam.gserviceaccount.com\"\n}}\n"
        );
        add("service account private_key_id", "json", text, vec![id]);
    }
    {
        let body = g.key_body(6, 64);
        let label = cat(&["RSA PRIVATE", " KEY"]);
        let lines: Vec<String> = body.iter().map(|l| format!("    \"{l}\\n\" +")).collect();
        let text = format!(
            "class Keys {{\n  static final String KEY =\n    \"-----BEGIN {label}-----\\n\" +\n{}\n    \"-----END {label}-----\\n\";\n}}\n",
            lines.join("\n")
        );
        add(
            "private key in java string concatenation",
            "java",
            text,
            body,
        );
    }
    {
        let body = g.key_body(6, 64);
        let label = cat(&["OPENSSH PRIVATE", " KEY"]);
        let indented: Vec<String> = body.iter().map(|l| format!("    {l}")).collect();
        let text = format!(
            "deploy:\n  ssh_key: |\n    -----BEGIN {label}-----\n{}\n    -----END {label}-----\n  host: build.internal\n",
            indented.join("\n")
        );
        add("private key in yaml block scalar", "yaml", text, body);
    }
    {
        let body = g.key_body(5, 64);
        let text = format!(
            "{}: 2: ssh-rsa\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n{}\n{}\nPrivate-Lines: {}\n{}\nPrivate-MAC: {}\n",
            cat(&["PuTTY-User-Key", "-File"]),
            g.base64(64),
            g.base64(20),
            body.len(),
            body.join("\n"),
            g.hex(40)
        );
        add("putty private key", "ppk", text, body);
    }

    // Cloud.
    let v = cat(&["AK", "IA"]) + &g.from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16);
    add(
        "aws access key id",
        "ini",
        format!("[default]\naws_access_key_id = {v}\n"),
        vec![v],
    );
    let v = g.base64(40);
    add(
        "aws secret access key",
        "ini",
        format!("[default]\naws_secret_access_key = {v}\n"),
        vec![v],
    );
    let v = cat(&["AI", "za"]) + &g.base64url(35);
    add(
        "google api key",
        "js",
        format!("const firebaseConfig = {{ apiKey: \"{v}\", projectId: \"shop\" }};\n"),
        vec![v],
    );
    let v = cat(&["GOC", "SPX-"]) + &g.base64url(28);
    add(
        "google oauth client secret",
        "json",
        format!("{{\"web\": {{\"client_secret\": \"{v}\"}}}}\n"),
        vec![v],
    );
    let v = g.base64(86) + "==";
    add(
        "azure storage connection string",
        "config",
        format!("<add name=\"Storage\" connectionString=\"DefaultEndpointsProtocol=https;AccountName=shopdata;{}={v};EndpointSuffix=core.windows.net\" />\n", cat(&["Account", "Key"])),
        vec![v],
    );
    let v = g.base64(43) + "=";
    add(
        "azure service bus connection string",
        "json",
        format!("{{\"ServiceBus\": \"Endpoint=sb://shop.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;{}={v}\"}}\n", cat(&["SharedAccess", "Key"])),
        vec![v],
    );
    let v = format!(
        "{}{}Q~{}",
        g.alnum(3),
        g.digits(1),
        g.base64url(34).replace('-', "_")
    );
    add(
        "azure ad client secret",
        "env",
        format!("AZURE_CLIENT_SECRET={v}\n"),
        vec![v],
    );
    let v = cat(&["LT", "AI"]) + &g.alnum(20);
    add(
        "alibaba access key id",
        "properties",
        format!("alibaba.accessKeyId={v}\n"),
        vec![v],
    );
    let v = cat(&["dop", "_v1_"]) + &g.hex(64);
    add(
        "digitalocean token",
        "sh",
        format!("export DIGITALOCEAN_ACCESS_TOKEN={v}\n"),
        vec![v],
    );
    let v = format!("{}.{}.{}", g.alnum(14), cat(&["atl", "asv1"]), g.alnum(67));
    add(
        "terraform cloud token",
        "hcl",
        format!("credentials \"app.terraform.io\" {{\n  token = \"{v}\"\n}}\n"),
        vec![v],
    );
    let v = cat(&["hv", "s."]) + &g.alnum(24);
    add(
        "vault token (unquoted yaml)",
        "yaml",
        format!("env:\n  VAULT_ADDR: https://vault.internal:8200\n  VAULT_TOKEN: {v}\n"),
        vec![v],
    );
    let v = cat(&["pu", "l-"]) + &g.hex(40);
    add(
        "pulumi token",
        "yaml",
        format!("pulumi:\n  accessToken: {v}\n"),
        vec![v],
    );
    let v = cat(&["dp.", "st."]) + &g.alnum(43);
    add(
        "doppler token",
        "env",
        format!("DOPPLER_TOKEN={v}\n"),
        vec![v],
    );
    let v = cat(&["da", "pi"]) + &g.hex(32);
    add(
        "databricks token",
        "cfg",
        format!("[DEFAULT]\nhost = https://adb.azuredatabricks.net\ntoken = {v}\n"),
        vec![v],
    );
    let v = cat(&["HR", "KU-AA"]) + &g.base64url(58);
    add(
        "heroku api key",
        "sh",
        format!("heroku config:set KEY=1 --app shop # uses {v}\n"),
        vec![v],
    );

    // Source hosting and registries.
    let v = cat(&["gh", "p_"]) + &g.alnum(36);
    add(
        "github classic pat",
        "yml",
        format!("env:\n  GH_TOKEN: {v}\n"),
        vec![v],
    );
    let v = cat(&["gh", "o_"]) + &g.alnum(36);
    add(
        "github oauth token",
        "json",
        format!("{{\"oauth\": \"{v}\"}}\n"),
        vec![v],
    );
    let v = cat(&["gh", "s_"]) + &g.alnum(36);
    add(
        "github app token",
        "txt",
        format!("installation token {v} expires in 1h\n"),
        vec![v],
    );
    let v = cat(&["gh", "r_"]) + &g.alnum(76);
    add(
        "github refresh token",
        "txt",
        format!("refresh={v}\n"),
        vec![v],
    );
    let v = cat(&["github", "_pat_"]) + &g.alnum(22) + "_" + &g.alnum(59);
    add(
        "github fine-grained pat",
        "sh",
        format!("git clone https://x:{v}@github.com/acme/shop.git\n"),
        vec![v],
    );
    let v = cat(&["gl", "pat-"]) + &g.base64url(20);
    add(
        "gitlab pat",
        "toml",
        format!("[gitlab]\nprivate_token = \"{v}\"\n"),
        vec![v],
    );
    let v = cat(&["gl", "ptt-"]) + &g.hex(40);
    add("gitlab pipeline trigger token", "sh", format!("curl -X POST -F token={v} -F ref=main https://gitlab.example.com/api/v4/projects/9/trigger/pipeline\n"), vec![v]);
    let v = cat(&["gl", "rt-"]) + &g.base64url(20);
    add(
        "gitlab runner token",
        "toml",
        format!("[[runners]]\n  token = \"{v}\"\n"),
        vec![v],
    );
    let v = cat(&["AT", "BB"]) + &g.alnum(32);
    add(
        "bitbucket app password",
        "env",
        format!("BITBUCKET_APP_PASSWORD={v}\n"),
        vec![v],
    );
    let v = cat(&["ATA", "TT3"]) + &g.base64url(186);
    add(
        "atlassian api token",
        "env",
        format!("JIRA_API_TOKEN={v}\n"),
        vec![v],
    );
    let v = cat(&["np", "m_"]) + &g.alnum(36);
    add(
        "npm token",
        "npmrc",
        format!("//registry.npmjs.org/:_authToken={v}\n"),
        vec![v],
    );
    let v = g.uuid();
    add(
        "npm legacy auth token",
        "npmrc",
        format!("//npm.pkg.github.com/:_authToken={v}\n"),
        vec![v],
    );
    let v = cat(&["pypi-", "AgE"]) + &g.base64url(70);
    add(
        "pypi token",
        "pypirc",
        format!("[pypi]\nusername = __token__\npassword = {v}\n"),
        vec![v],
    );
    let v = cat(&["rubygems", "_"]) + &g.hex(48);
    add(
        "rubygems token",
        "yml",
        format!("---\n:rubygems_api_key: {v}\n"),
        vec![v],
    );
    let v = cat(&["dckr", "_pat_"]) + &g.base64url(27);
    add(
        "docker hub pat",
        "sh",
        format!("echo {v} | docker login -u ci --password-stdin\n"),
        vec![v],
    );
    let auth = g.base64(40);
    add(
        "docker config auth",
        "json",
        format!("{{\n  \"auths\": {{\n    \"registry.example.com\": {{\n      \"auth\": \"{auth}\"\n    }}\n  }}\n}}\n"),
        vec![auth],
    );
    let v = cat(&["h", "f_"]) + &g.letters(34);
    add(
        "hugging face token",
        "py",
        format!("login(token=\"{v}\")\n"),
        vec![v],
    );
    let v = format!("{}{}-{}", cat(&["PM", "AK-"]), g.hex(24), g.hex(34));
    add(
        "postman api key",
        "json",
        format!("{{\"postman\": \"{v}\"}}\n"),
        vec![v],
    );

    // AI providers.
    let v = cat(&["sk-", "ant-api03-"]) + &g.base64url(93) + "AA";
    add(
        "anthropic api key",
        "env",
        format!("ANTHROPIC_API_KEY={v}\n"),
        vec![v],
    );
    let v = cat(&["sk-", "proj-"]) + &g.base64url(100);
    add(
        "openai project key",
        "py",
        format!("client = OpenAI(api_key=\"{v}\")\n"),
        vec![v],
    );
    let v = cat(&["sk-"]) + &g.alnum(20) + "T3BlbkFJ" + &g.alnum(20);
    add(
        "openai legacy key",
        "ts",
        format!("const openai = new OpenAI({{ apiKey: '{v}' }});\n"),
        vec![v],
    );
    let v = cat(&["gs", "k_"]) + &g.alnum(52);
    add(
        "groq api key",
        "env",
        format!("GROQ_API_KEY={v}\n"),
        vec![v],
    );
    let v = cat(&["r8", "_"]) + &g.alnum(37);
    add(
        "replicate token",
        "sh",
        format!("export REPLICATE_API_TOKEN={v}\n"),
        vec![v],
    );

    // Messaging, mail, payments.
    let v = format!(
        "{}{}-{}-{}",
        cat(&["xo", "xb-"]),
        g.digits(12),
        g.digits(13),
        g.alnum(24)
    );
    add(
        "slack bot token",
        "py",
        format!("app = App(token=\"{v}\")\n"),
        vec![v],
    );
    let v = format!(
        "{}{}-{}-{}-{}",
        cat(&["xo", "xp-"]),
        g.digits(12),
        g.digits(12),
        g.digits(13),
        g.hex(32)
    );
    add(
        "slack user token",
        "json",
        format!("{{\"slack\": {{\"user\": \"{v}\"}}}}\n"),
        vec![v],
    );
    let v = format!(
        "https://{}/services/T{}/B{}/{}",
        cat(&["hooks.", "slack.com"]),
        g.upper_alnum(10),
        g.upper_alnum(10),
        g.alnum(24)
    );
    add(
        "slack webhook url",
        "yaml",
        format!("alerts:\n  webhook: {v}\n"),
        vec![v],
    );
    let v = format!(
        "https://discord.com/api/{}/{}/{}",
        "webhooks",
        g.digits(18),
        g.base64url(68)
    );
    add(
        "discord webhook url",
        "json",
        format!("{{\"discord\": \"{v}\"}}\n"),
        vec![v],
    );
    let v = format!(
        "M{}.{}.{}",
        g.base64url(25),
        g.base64url(6),
        g.base64url(38)
    );
    add(
        "discord bot token",
        "py",
        format!("DISCORD_BOT_TOKEN = \"{v}\"\nclient.run(DISCORD_BOT_TOKEN)\n"),
        vec![v],
    );
    let v = format!("{}:{}{}", g.digits(10), cat(&["A", "A"]), g.base64url(33));
    add(
        "telegram bot token",
        "py",
        format!("bot = telebot.TeleBot(\"{v}\")\n"),
        vec![v],
    );
    let v = cat(&["A", "C"]) + &g.hex(32);
    add(
        "twilio account sid",
        "js",
        format!("const client = twilio('{v}', process.env.TWILIO_AUTH);\n"),
        vec![v],
    );
    let v = cat(&["S", "K"]) + &g.hex(32);
    add(
        "twilio api key",
        "env",
        format!("TWILIO_API_KEY={v}\n"),
        vec![v],
    );
    let v = g.hex(32);
    add(
        "twilio auth token",
        "env",
        format!("TWILIO_AUTH_TOKEN={v}\n"),
        vec![v],
    );
    let v = format!(
        "{}{}.{}",
        cat(&["S", "G."]),
        g.base64url(22),
        g.base64url(43)
    );
    add(
        "sendgrid api key",
        "rb",
        format!("sg = SendGrid::API.new(api_key: '{v}')\n"),
        vec![v],
    );
    let v = format!("{}-us{}", g.hex(32), 1 + g.next_u64() % 20);
    add(
        "mailchimp api key",
        "php",
        format!("$mc = new Mailchimp('{v}');\n"),
        vec![v],
    );
    let v = cat(&["ke", "y-"]) + &g.hex(32);
    add(
        "mailgun api key",
        "py",
        format!("requests.post(url, auth=(\"api\", \"{v}\"))\n"),
        vec![v],
    );
    let v = cat(&["sk", "_live_"]) + &g.alnum(99);
    add(
        "stripe secret key",
        "rb",
        format!("Stripe.api_key = '{v}'\n"),
        vec![v],
    );
    let v = cat(&["rk", "_live_"]) + &g.alnum(99);
    add(
        "stripe restricted key",
        "env",
        format!("STRIPE_RESTRICTED={v}\n"),
        vec![v],
    );
    let v = cat(&["whs", "ec_"]) + &g.alnum(32);
    add(
        "stripe webhook secret",
        "yaml",
        format!("stripe:\n  endpoint_secret: {v}\n"),
        vec![v],
    );
    let v = cat(&["sq0", "atp-"]) + &g.base64url(22);
    add(
        "square access token",
        "env",
        format!("SQUARE_ACCESS_TOKEN={v}\n"),
        vec![v],
    );
    let v = cat(&["shp", "at_"]) + &g.hex(32);
    add(
        "shopify access token",
        "js",
        format!("const shopify = new Shopify({{ accessToken: \"{v}\" }});\n"),
        vec![v],
    );

    // Observability and SaaS.
    let v = cat(&["sntr", "yu_"]) + &g.hex(64);
    add(
        "sentry user token",
        "env",
        format!("SENTRY_AUTH_TOKEN={v}\n"),
        vec![v],
    );
    let v = format!("{}{}_{}", cat(&["gl", "sa_"]), g.alnum(32), g.hex(8));
    add(
        "grafana service account token",
        "yaml",
        format!("grafana:\n  token: {v}\n"),
        vec![v],
    );
    let v = cat(&["NR", "AK-"]) + &g.upper_alnum(27);
    add(
        "new relic user key",
        "env",
        format!("NEW_RELIC_API_KEY={v}\n"),
        vec![v],
    );
    let v = format!(
        "{}{}.{}",
        cat(&["dt0", "c01."]),
        g.upper_alnum(24),
        g.upper_alnum(64)
    );
    add(
        "dynatrace token",
        "yaml",
        format!("dynatrace:\n  api_token: {v}\n"),
        vec![v],
    );
    let v = cat(&["lin", "_api_"]) + &g.alnum(40);
    add(
        "linear api key",
        "ts",
        format!("const linear = new LinearClient({{ apiKey: \"{v}\" }});\n"),
        vec![v],
    );
    let v = cat(&["AGE-SECRET", "-KEY-1"]) + &g.upper_alnum(58);
    add(
        "age secret key",
        "txt",
        format!(
            "# created: 2024-01-01\n# public key: age1{}\n{v}\n",
            g.lower_alnum(58)
        ),
        vec![v],
    );
    let v = g.uuid();
    add(
        "heroku api key (uuid)",
        "env",
        format!("HEROKU_API_KEY={v}\n"),
        vec![v],
    );
    let v = g.hex(32);
    add(
        "datadog api key",
        "yaml",
        format!("datadog:\n  api_key: {v}\n"),
        vec![v],
    );

    // Web tokens, URLs, headers.
    let v = format!(
        "eyJ{}.eyJ{}.{}",
        g.base64url(30),
        g.base64url(60),
        g.base64url(43)
    );
    add(
        "jwt",
        "http",
        format!("GET /api/orders HTTP/1.1\nHost: shop.example.com\nCookie: session={v}\n"),
        vec![v],
    );
    let v = g.password(14);
    add(
        "postgres url password",
        "env",
        format!("DATABASE_URL=postgres://shop:{v}@db.internal:5432/shop\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "mysql url password",
        "py",
        format!("engine = create_engine(\"mysql+pymysql://app:{v}@mysql.internal/app\")\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "mongodb url password",
        "js",
        format!("mongoose.connect('mongodb+srv://admin:{v}@cluster0.mongodb.net/shop');\n"),
        vec![v],
    );
    let v = g.alnum(20);
    add(
        "redis url password",
        "yaml",
        format!("cache:\n  url: redis://:{v}@redis.internal:6379/0\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "basic auth url",
        "sh",
        format!(
            "curl https://deploy:{v}@artifacts.internal/releases/latest.tar.gz -o latest.tar.gz\n"
        ),
        vec![v],
    );
    let v = g.password(12);
    add(
        "amqp url password",
        "toml",
        format!("[queue]\nurl = \"amqp://worker:{v}@rabbit.internal:5672/\"\n"),
        vec![v],
    );
    let v = g.password(14);
    add(
        "jdbc password parameter",
        "properties",
        format!("db.url=jdbc:mysql://db.internal:3306/shop?user=app&password={v}&useSSL=true\n"),
        vec![v],
    );
    let v = g.password(12);
    add("ado.net connection string password", "json", format!("{{\"ConnectionStrings\": {{\"Default\": \"Server=sql.internal;Database=Shop;User Id=sa;Password={v};TrustServerCertificate=True\"}}}}\n"), vec![v]);
    let v = g.alnum(40);
    add(
        "bearer token header",
        "sh",
        format!("curl -H \"Authorization: Bearer {v}\" https://api.example.com/v1/orders\n"),
        vec![v],
    );
    let v = g.base64(32);
    add(
        "basic auth header",
        "http",
        format!("POST /upload HTTP/1.1\nAuthorization: Basic {v}\n"),
        vec![v],
    );
    let v = g.alnum(32);
    add("x-api-key header in curl", "sh", format!("curl -s -H 'Accept: application/json' -H \"X-Api-Key: {v}\" https://api.example.com/v2/items\n"), vec![v]);
    let v = g.password(12);
    add(
        "curl user password",
        "sh",
        format!("curl -u deploy:{v} https://nexus.internal/repository/releases/\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "netrc password",
        "netrc",
        format!("machine api.example.com login deploy password {v}\n"),
        vec![v],
    );

    // Values assigned to secret-looking names.
    let v = g.password(10);
    add(
        "short db_password",
        "py",
        format!("DATABASES = {{\"default\": {{\"db_password\": \"{v}\"}}}}\n"),
        vec![v],
    );
    let v = g.base64(44);
    add(
        "encryption_key",
        "rb",
        format!("config.encryption_key = \"{v}\"\n"),
        vec![v],
    );
    let v = g.alnum(32);
    add(
        "signing_salt",
        "exs",
        format!("config :shop, ShopWeb.Endpoint,\n  live_view: [signing_salt: \"{v}\"]\n"),
        vec![v],
    );
    let v = format!("django-insecure-{}", g.lower_alnum(50));
    add(
        "django secret key",
        "py",
        format!("SECRET_KEY = '{v}'\n"),
        vec![v],
    );
    // Django's own alphabet (`get_random_secret_key`) has `^ @ * & ! # -`: unquoted in a
    // compose file's environment list, and in its mapping form.
    let v = format!("{}^@*&!#-{}", g.lower_alnum(21), g.lower_alnum(22));
    add(
        "django secret key in a compose environment",
        "yml",
        format!("services:\n  web:\n    image: shop/web:2.4\n    environment:\n      - DEBUG=0\n      - DJANGO_SECRET_KEY={v}\n    ports:\n      - \"8000:8000\"\n"),
        vec![v],
    );
    let v = format!("{}#-!&{}", g.lower_alnum(25), g.lower_alnum(21));
    add(
        "django secret key in a compose environment mapping",
        "yml",
        format!("services:\n  worker:\n    environment:\n      SECRET_KEY: {v}\n      LOG_LEVEL: info\n"),
        vec![v],
    );
    let v = g.hex(128);
    add(
        "rails secret_key_base",
        "yml",
        format!("production:\n  secret_key_base: {v}\n"),
        vec![v],
    );
    let v = g.alnum(40);
    add(
        "client_secret in json",
        "json",
        format!("{{\"client_id\": \"shop-web\", \"client_secret\": \"{v}\"}}\n"),
        vec![v],
    );
    let v = g.password(16);
    add("xml password element", "xml", format!("<settings>\n  <servers>\n    <server>\n      <id>releases</id>\n      <username>deploy</username>\n      <password>{v}</password>\n    </server>\n  </servers>\n</settings>\n"), vec![v]);
    let v = g.alnum(32);
    add(
        "c #define secret",
        "h",
        format!("#ifndef CONFIG_H\n#define CONFIG_H\n#define SECRET_KEY \"{v}\"\n#endif\n"),
        vec![v],
    );
    let v = g.password(14);
    add(
        "spring datasource password",
        "properties",
        format!(
            "spring.datasource.url=jdbc:postgresql://db/shop\nspring.datasource.password={v}\n"
        ),
        vec![v],
    );
    let v = g.password(12);
    add(
        "ansible ssh password",
        "yml",
        format!("all:\n  vars:\n    ansible_ssh_pass: {v}\n"),
        vec![v],
    );
    let v = g.alnum(40);
    add(
        "go const api token",
        "go",
        format!("package config\n\nconst apiToken = \"{v}\"\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "kotlin password val",
        "kt",
        format!("val dbPassword = \"{v}\"\n"),
        vec![v],
    );
    let v = g.alnum(32);
    add(
        "setenv call",
        "py",
        format!("os.environ.setdefault(\"WEBHOOK_SECRET\", \"{v}\")\n"),
        vec![v],
    );
    let v = g.alnum(24);
    add(
        "session secret in js object",
        "js",
        format!("app.use(session({{ secret: '{v}', resave: false }}));\n"),
        vec![v],
    );
    let v = g.base64(40);
    add(
        "hmac key in toml",
        "toml",
        format!("[auth]\nhmac_key = \"{v}\"\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "ini password",
        "ini",
        format!("[database]\nhost = db.internal\nuser = app\npassword = {v}\n"),
        vec![v],
    );
    let v = g.alnum(32);
    add(
        "terraform variable default",
        "tf",
        format!("variable \"api_token\" {{\n  default = \"{v}\"\n}}\n"),
        vec![v],
    );
    let v = g.base64(40);
    add(
        "kubernetes secret data",
        "yaml",
        format!("apiVersion: v1\nkind: Secret\ndata:\n  password: {v}\n"),
        vec![v],
    );
    let v = g.alnum(32);
    add(
        "maven master password",
        "xml",
        format!("<settingsSecurity>\n  <master>{{{v}}}</master>\n</settingsSecurity>\n"),
        vec![v],
    );
    // Secrets in more shapes (issue #55): the config formats that hold credentials,
    // literals passed to authentication and signing calls, keys inside URLs' paths,
    // wallet keys in deployment configs.
    let v = g.password(14);
    add(
        "pgpass line",
        "pgpass",
        format!("# hostname:port:database:username:password\ndb.internal:5432:shop:app:{v}\n"),
        vec![v],
    );
    let v = g.password(16);
    add(
        "pgpass line behind pgbouncer",
        "pgpass",
        format!("*:6432:*:report:{v}\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "netrc entry over several lines",
        "netrc",
        format!("machine git.internal\n  login ci\n  account ops\n  password {v}\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "netrc default entry",
        "netrc",
        format!("default login anonymous password {v}\n"),
        vec![v],
    );
    let v = g.password(14);
    add(
        "wpa_supplicant psk",
        "conf",
        format!("network={{\n    ssid=\"ShopWifi\"\n    psk=\"{v}\"\n    key_mgmt=WPA-PSK\n}}\n"),
        vec![v],
    );
    let v = g.hex(64);
    add(
        "hostapd wpa_psk",
        "conf",
        format!("interface=wlan0\nssid=ShopGuest\nwpa_psk={v}\n"),
        vec![v],
    );
    let v = g.base64(43) + "=";
    add(
        "wireguard interface key",
        "conf",
        format!(
            "[Interface]\n{} = {v}\nAddress = 10.8.0.2/32\n",
            cat(&["Private", "Key"])
        ),
        vec![v],
    );
    let (public, v) = (g.base64(43) + "=", g.base64(43) + "=");
    add(
        "wireguard preshared key",
        "conf",
        format!(
            "[Peer]\nPublicKey = {public}\n{} = {v}\nEndpoint = vpn.example.com:51820\n",
            cat(&["Preshared", "Key"])
        ),
        vec![v],
    );
    for (kind, tag) in [
        ("openvpn inline tls-auth key", "tls-auth"),
        ("openvpn inline static secret", "secret"),
        ("openvpn inline tls-crypt key", "tls-crypt"),
    ] {
        let body: Vec<String> = (0..16).map(|_| g.hex(32)).collect();
        let label = cat(&["OpenVPN Static", " key V1"]);
        let text = format!(
            "client\nremote vpn.example.com 1194\n<{tag}>\n-----BEGIN {label}-----\n{}\n-----END {label}-----\n</{tag}>\n",
            body.join("\n")
        );
        add(kind, "ovpn", text, body);
    }
    {
        let (text, body) = pem_block(g, "", 64);
        add(
            "openvpn inline private key",
            "ovpn",
            format!("client\n<key>\n{text}</key>\n"),
            body,
        );
    }
    let v = g.password(13);
    add(
        "openvpn inline auth-user-pass",
        "ovpn",
        format!("client\n<auth-user-pass>\nvpnuser\n{v}\n</auth-user-pass>\n"),
        vec![v],
    );
    let (v, w) = (g.password(12), g.password(13));
    add(
        "ansible ini inventory passwords",
        "ini",
        format!("[web]\nweb1 ansible_host=10.0.0.5 ansible_user=deploy ansible_ssh_pass={v} ansible_become_pass={w}\n"),
        vec![v, w],
    );
    let v = g.password(12);
    add(
        "ansible inventory password in a host line",
        "ini",
        format!("[db]\ndb1 ansible_password={v} ansible_host=10.0.0.9\n"),
        vec![v],
    );
    let v = g.password(14);
    add(
        "sssd ldap_default_authtok",
        "conf",
        format!("[domain/corp]\nldap_default_bind_dn = cn=svc,dc=corp,dc=example\nldap_default_authtok_type = password\nldap_default_authtok = {v}\n"),
        vec![v],
    );
    let v = g.password(15);
    add(
        "nuget ClearTextPassword",
        "config",
        format!("<packageSourceCredentials>\n  <Shop>\n    <add key=\"Username\" value=\"ci\" />\n    <add key=\"{}\" value=\"{v}\" />\n  </Shop>\n</packageSourceCredentials>\n", cat(&["ClearText", "Password"])),
        vec![v],
    );
    let v = g.alnum(32);
    add(
        "appSettings api key",
        "config",
        format!("<appSettings>\n  <add key=\"PaymentsApiKey\" value=\"{v}\" />\n</appSettings>\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "spring xml property password",
        "xml",
        format!("<bean id=\"ds\" class=\"org.apache.commons.dbcp2.BasicDataSource\">\n  <property name=\"password\" value=\"{v}\"/>\n</bean>\n"),
        vec![v],
    );
    let v = g.base64(28);
    add(
        "nginx basic authorization header",
        "conf",
        format!("location /api/ {{\n    proxy_pass http://backend;\n    proxy_set_header Authorization \"Basic {v}\";\n}}\n"),
        vec![v],
    );
    let v = g.base64(32);
    add(
        "apache basic authorization header",
        "conf",
        format!(
            "<Location /reports>\n  RequestHeader set Authorization \"Basic {v}\"\n</Location>\n"
        ),
        vec![v],
    );
    let v = g.base64(24) + "==";
    add(
        "basic authorization in a json header map",
        "json",
        format!("{{\"headers\": {{\"Authorization\": \"Basic {v}\"}}}}\n"),
        vec![v],
    );
    let v = g.password(16);
    add(
        "redis requirepass",
        "conf",
        format!("bind 127.0.0.1\nport 6379\nrequirepass {v}\n"),
        vec![v],
    );

    // Literals passed to authentication and signing calls.
    let v = g.password(24);
    add(
        "jwt.sign with an hs256 secret",
        "js",
        format!("const token = jwt.sign({{ sub: user.id }}, '{v}', {{ algorithm: 'HS256', expiresIn: '1h' }});\n"),
        vec![v],
    );
    let v = g.password(20);
    add(
        "pyjwt encode with a key",
        "py",
        format!("token = jwt.encode({{\"sub\": user_id}}, \"{v}\", algorithm=\"HS256\")\n"),
        vec![v],
    );
    let v = g.password(22);
    add(
        "go jwt SignedString",
        "go",
        format!("signed, err := token.SignedString([]byte(\"{v}\"))\n"),
        vec![v],
    );
    let v = g.alnum(32);
    add(
        "node createHmac key",
        "js",
        format!(
            "const signature = crypto.createHmac('sha256', '{v}').update(body).digest('hex');\n"
        ),
        vec![v],
    );
    let v = g.alnum(32);
    add(
        "python hmac.new key",
        "py",
        format!("digest = hmac.new(b\"{v}\", body, hashlib.sha256).hexdigest()\n"),
        vec![v],
    );
    let v = g.password(18);
    add(
        "pycryptodome HMAC.new key",
        "py",
        format!("h = HMAC.new(b'{v}', digestmod=SHA256)\n"),
        vec![v],
    );
    let v = g.alnum(40);
    add(
        "php hash_hmac key",
        "php",
        format!("$signature = hash_hmac('sha256', $payload, '{v}');\n"),
        vec![v],
    );
    let v = g.alnum(32);
    add(
        "ruby OpenSSL HMAC key",
        "rb",
        format!("sig = OpenSSL::HMAC.hexdigest('SHA256', '{v}', payload)\n"),
        vec![v],
    );
    let v = g.password(20);
    add(
        "java SecretKeySpec key",
        "java",
        format!("Key key = new SecretKeySpec(\"{v}\".getBytes(UTF_8), \"HmacSHA256\");\n"),
        vec![v],
    );
    let v = g.password(20);
    add(
        "java-jwt Algorithm.HMAC256 secret",
        "java",
        format!("Algorithm algorithm = Algorithm.HMAC256(\"{v}\");\n"),
        vec![v],
    );
    let v = g.password(20);
    add(
        "rust jsonwebtoken from_secret",
        "rs",
        format!("let key = EncodingKey::from_secret(b\"{v}\");\n"),
        vec![v],
    );
    let discord_token = |g: &mut Gen| {
        format!(
            "M{}.{}.{}",
            g.base64url(25),
            g.base64url(6),
            g.base64url(38)
        )
    };
    let v = discord_token(g);
    add(
        "discord.js client.login token",
        "js",
        format!("const {{ Client, GatewayIntentBits }} = require(\"discord.js\");\nconst client = new Client({{ intents: [GatewayIntentBits.Guilds] }});\nclient.on(\"ready\", () => console.log(\"ready\"));\nclient.login(\"{v}\");\n"),
        vec![v],
    );
    let v = discord_token(g);
    add(
        "discord.py bot.run token",
        "py",
        format!("import discord\n\nbot = discord.Client(intents=discord.Intents.default())\n\nbot.run(\"{v}\")\n"),
        vec![v],
    );
    let v = g.alnum(40);
    add(
        "client.login with a token",
        "ts",
        format!("await client.login(\"{v}\");\n"),
        vec![v],
    );
    let v = g.password(14);
    add(
        "smtp login password",
        "py",
        format!("server = smtplib.SMTP_SSL(\"smtp.example.com\", 465)\nserver.login(\"alerts@shop.example.com\", \"{v}\")\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "ldap simple_bind_s password",
        "py",
        format!("conn.simple_bind_s(\"cn=admin,dc=corp,dc=example\", \"{v}\")\n"),
        vec![v],
    );
    let v = g.password(12);
    add(
        "requests auth tuple",
        "py",
        format!("r = requests.get(url, auth=(\"deploy\", \"{v}\"), timeout=10)\n"),
        vec![v],
    );
    let v = g.password(13);
    add(
        "HTTPBasicAuth password",
        "py",
        format!("session.auth = HTTPBasicAuth(\"deploy\", \"{v}\")\n"),
        vec![v],
    );
    let v = g.password(15);
    add(
        "authenticate call password",
        "js",
        format!("const user = await ldap.authenticate(\"svc-reports\", \"{v}\");\n"),
        vec![v],
    );

    // Keys inside URLs' paths.
    let v = format!("{}:{}{}", g.digits(10), cat(&["A", "A"]), g.base64url(33));
    add(
        "telegram bot token in an api url",
        "sh",
        format!(
            "curl -s \"https://api.telegram.org/bot{v}/sendMessage\" -d chat_id=42 -d text=done\n"
        ),
        vec![v],
    );
    let (v, w) = (g.hex(32), g.uuid());
    add(
        "teams incoming webhook url",
        "json",
        format!(
            "{{\"teams\": \"https://shop.webhook.office.com/webhookb2/{}@{}/IncomingWebhook/{v}/{w}\"}}\n",
            g.uuid(),
            g.uuid()
        ),
        vec![v, w],
    );
    let v = g.lower_alnum(26);
    add(
        "mattermost webhook url",
        "yaml",
        format!("notify:\n  url: https://chat.example.com/hooks/{v}\n"),
        vec![v],
    );
    let v = g.base64url(22);
    add(
        "ifttt maker key in a url",
        "py",
        format!("requests.post(\"https://maker.ifttt.com/trigger/deployed/with/key/{v}\")\n"),
        vec![v],
    );
    let v = format!(
        "{}/T{}/B{}/{}",
        cat(&["hooks.", "slack.com/services"]),
        g.upper_alnum(10),
        g.upper_alnum(10),
        g.alnum(24)
    );
    add(
        "slack webhook url without a scheme",
        "env",
        format!("SLACK_HOOK={v}\n"),
        vec![v],
    );

    // Wallet keys in deployment configs.
    let v = g.hex(64);
    add(
        "hardhat accounts wallet key",
        "js",
        format!("module.exports = {{\n  networks: {{\n    mainnet: {{\n      url: \"https://eth.example.com\",\n      accounts: [\"0x{v}\"],\n    }},\n  }},\n}};\n"),
        vec![v],
    );
    let (v, w) = (g.hex(64), g.hex(64));
    add(
        "hardhat accounts over several lines",
        "ts",
        format!("const config: HardhatUserConfig = {{\n  networks: {{\n    sepolia: {{\n      accounts: [\n        \"0x{v}\",\n        \"0x{w}\",\n      ],\n    }},\n  }},\n}};\n"),
        vec![v, w],
    );
    let v = g.hex(64);
    add(
        "ethers wallet key argument",
        "js",
        format!("const wallet = new ethers.Wallet(\"0x{v}\", provider);\n"),
        vec![v],
    );
    let v = g.mnemonic(12);
    add(
        "truffle mnemonic",
        "js",
        format!("const HDWalletProvider = require(\"@truffle/hdwallet-provider\");\nconst mnemonic = \"{v}\";\n"),
        vec![v],
    );
    let v = g.mnemonic(24);
    add(
        "hardhat accounts mnemonic",
        "js",
        format!("networks: {{\n  goerli: {{\n    accounts: {{ mnemonic: \"{v}\" }},\n  }},\n}},\n"),
        vec![v],
    );
    let v = g.mnemonic(12);
    add(
        "HDWalletProvider mnemonic argument",
        "js",
        format!("provider: () => new HDWalletProvider(\"{v}\", \"https://rpc.example.com\"),\n"),
        vec![v],
    );
    out
}

/// Benign look-alikes (more than 30): each must come through redaction unchanged.
pub fn benign(seed: u64) -> Vec<Benign> {
    let g = &mut Gen::new(seed ^ 0x5EED);
    let mut out = Vec::new();
    let mut add = |kind: &'static str, ext: &'static str, text: String| {
        out.push(Benign { kind, ext, text });
    };
    add("npm lockfile integrity (sri sha512)", "json", format!("\"node_modules/left-pad\": {{\n  \"version\": \"1.3.0\",\n  \"resolved\": \"https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz\",\n  \"integrity\": \"sha512-{}==\"\n}}\n", g.base64(86)));
    add("html sri sha384", "html", format!("<script src=\"https://cdn.example.com/lib.js\" integrity=\"sha384-{}\" crossorigin=\"anonymous\"></script>\n", g.base64(64)));
    add(
        "cargo lock checksum",
        "lock",
        format!(
            "[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\nchecksum = \"{}\"\n",
            g.hex(64)
        ),
    );
    add("yarn lock resolved hash", "lock", format!("left-pad@^1.3.0:\n  resolved \"https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#{}\"\n", g.hex(40)));
    add(
        "go.sum line",
        "sum",
        format!("golang.org/x/text v0.14.0 h1:{}=\n", g.base64(43)),
    );
    add(
        "poetry lock hash",
        "lock",
        format!(
            "files = [\n    {{file = \"requests-2.31.0.tar.gz\", hash = \"sha256:{}\"}},\n]\n",
            g.hex(64)
        ),
    );
    add(
        "git commit sha",
        "md",
        format!("Fixed in commit {} (see the changelog).\n", g.hex(40)),
    );
    add(
        "git commit ids in json and a compose environment",
        "json",
        format!(
            "{{\n  \"sha\": \"{}\",\n  \"parents\": [\"{}\"],\n  \"build_env\": \"GIT_COMMIT={}\"\n}}\n",
            g.hex(40),
            g.hex(40),
            g.hex(40)
        ),
    );
    add(
        "docker image digest",
        "yaml",
        format!("image: nginx@sha256:{}\n", g.hex(64)),
    );
    add(
        "uuid id",
        "json",
        format!("{{\"id\": \"{}\", \"name\": \"order\"}}\n", g.uuid()),
    );
    add(
        "uuid request id",
        "log",
        format!("request_id={} status=200\n", g.uuid()),
    );
    add(
        "base64 test fixture",
        "py",
        format!("ENCODED_IMAGE = \"{}\"\n", g.base64(60)),
    );
    add(
        "data uri image",
        "css",
        format!(
            ".logo {{ background: url(data:image/png;base64,iVBORw0KGgo{}); }}\n",
            g.base64(60)
        ),
    );
    add(
        "storage key name",
        "ts",
        "export const accessTokenStorageKey = \"acme.auth.accessTokenV2Storage\";\n".to_string(),
    );
    add(
        "password field name constant",
        "py",
        "PASSWORD_FIELD = \"user_password\"\n".to_string(),
    );
    add(
        "token from env",
        "py",
        "token = os.environ[\"GITHUB_TOKEN\"]\n".to_string(),
    );
    add(
        "password from env in yaml",
        "yaml",
        "database:\n  password: ${DB_PASSWORD}\n".to_string(),
    );
    add(
        "api key placeholder",
        "md",
        "Set `api_key = \"<your-api-key>\"` in config.toml.\n".to_string(),
    );
    add(
        "github actions secret reference",
        "yml",
        "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n".to_string(),
    );
    add(
        "token type",
        "ts",
        "const TOKEN_TYPE = \"Bearer\";\n".to_string(),
    );
    add(
        "max tokens",
        "py",
        "response = client.create(model=model, max_tokens=4096)\n".to_string(),
    );
    add(
        "password reset url",
        "py",
        "PASSWORD_RESET_URL = \"https://shop.example.com/account/reset\"\n".to_string(),
    );
    add(
        "secret name path",
        "yaml",
        "secretName: prod/db/credentials\n".to_string(),
    );
    add(
        "public key block",
        "txt",
        format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n{}\n-----END PUBLIC KEY-----\n",
            g.base64(64),
            g.base64(24)
        ),
    );
    add(
        "certificate block",
        "txt",
        format!(
            "-----BEGIN CERTIFICATE-----\n{}\n{}\n{}\n-----END CERTIFICATE-----\n",
            g.base64(64),
            g.base64(64),
            g.base64(20)
        ),
    );
    add(
        "ssh public key",
        "pub",
        format!(
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} deploy@build\n",
            g.base64(43)
        ),
    );
    add(
        "url with user only",
        "toml",
        "[dependencies]\nshop = { git = \"ssh://git@github.com/acme/shop.git\" }\n".to_string(),
    );
    add(
        "url with placeholder password",
        "yaml",
        "url: postgres://user:password@localhost:5432/dev\n".to_string(),
    );
    add(
        "url with port",
        "env",
        "API_URL=http://localhost:8080/api\n".to_string(),
    );
    add(
        "css class with sk- prefix",
        "css",
        ".sk-fading-circle { animation: sk-circleFadeDelay 1.2s infinite; }\n".to_string(),
    );
    add(
        "pem marker constant",
        "rs",
        format!(
            "const BEGIN: &str = \"-----BEGIN {}-----\";\n",
            cat(&["PRIVATE", " KEY"])
        ),
    );
    add(
        "long identifier",
        "java",
        "SecretManagerServiceClient secretManagerServiceClientConfigurationV2 = build();\n"
            .to_string(),
    );
    add(
        "i18n password message",
        "json",
        "{\"password.reset.emailSent\": \"Check your email for a reset link\"}\n".to_string(),
    );
    add(
        "tokenizer name",
        "py",
        "tokenizer = AutoTokenizer.from_pretrained(\"bert-base-uncased\")\n".to_string(),
    );
    add(
        "password hash call",
        "py",
        "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())\n".to_string(),
    );
    add(
        "api key header from env",
        "sh",
        "curl -H \"X-Api-Key: $API_KEY\" https://api.example.com/v1/items\n".to_string(),
    );
    add(
        "define secret length",
        "h",
        "#define SECRET_KEY_LEN 32\n".to_string(),
    );
    add(
        "maven password from env",
        "xml",
        "<server>\n  <password>${env.DEPLOY_PASSWORD}</password>\n</server>\n".to_string(),
    );
    add(
        "password min length",
        "py",
        "PASSWORD_MIN_LENGTH = 12\n".to_string(),
    );
    add(
        "token url",
        "py",
        "TOKEN_URL = \"https://oauth2.googleapis.com/token\"\n".to_string(),
    );
    add(
        "go struct tag",
        "go",
        "type Login struct {\n\tPassword string `json:\"password\"`\n}\n".to_string(),
    );
    add(
        "secret flag",
        "yaml",
        "inputs:\n  api-key:\n    secret: true\n    required: false\n".to_string(),
    );
    add(
        "session secret from function",
        "py",
        "SESSION_SECRET = secrets.token_hex(32)\n".to_string(),
    );
    add(
        "rust field type",
        "rs",
        "struct Config {\n    password: String,\n    api_key: Option<ApiKey>,\n}\n".to_string(),
    );
    add(
        "hex test vector",
        "rs",
        format!("let expected = hex!(\"{}\");\n", g.hex(64)),
    );
    add(
        "jwt header only",
        "md",
        "A token starts with `eyJhbGciOiJIUzI1NiJ9`, the encoded header.\n".to_string(),
    );
    add(
        "password variable to variable",
        "js",
        "const password = req.body.password;\n".to_string(),
    );
    add(
        "aws example doc arn",
        "md",
        "arn:aws:iam::123456789012:user/deploy\n".to_string(),
    );
    add(
        "high entropy id not secret-named",
        "yaml",
        format!("trace_id: {}\n", g.alnum(32)),
    );
    add(
        "semver and commit",
        "txt",
        format!("version = \"1.2.3+{}\"\n", g.hex(7)),
    );
    // Look-alikes of the shapes of issue #55.
    add(
        "pgpass line with a wildcard password",
        "pgpass",
        "localhost:5432:*:postgres:*\n".to_string(),
    );
    add(
        "pgpass line with a placeholder password",
        "pgpass",
        "db.internal:5432:shop:app:<password>\n".to_string(),
    );
    add(
        "jwt.sign with a secret from the environment",
        "js",
        "const token = jwt.sign(payload, process.env.SECRET, { expiresIn: '1h' });\n".to_string(),
    );
    add(
        "jwt.sign with a placeholder secret",
        "js",
        "const token = jwt.sign(payload, 'changeme');\n".to_string(),
    );
    add(
        "createHmac with a key variable",
        "js",
        "const signature = crypto.createHmac('sha256', secret).update(body).digest('hex');\n"
            .to_string(),
    );
    add(
        "hmac.new with a key variable",
        "py",
        "digest = hmac.new(key, body, hashlib.sha256).hexdigest()\n".to_string(),
    );
    add(
        "string encoded to utf-8",
        "py",
        "data = text.encode(\"utf-8\")\n".to_string(),
    );
    add(
        "client.login with a token from the environment",
        "js",
        "const { Client } = require(\"discord.js\");\nclient.login(process.env.DISCORD_TOKEN);\n"
            .to_string(),
    );
    add(
        "smtp login with a placeholder",
        "py",
        "server.login(\"alerts@shop.example.com\", \"<password>\")\n".to_string(),
    );
    add(
        "transaction hash",
        "js",
        format!("const txHash = \"0x{}\";\n", g.hex(64)),
    );
    add(
        "role id constant (a keccak hash)",
        "sol",
        format!(
            "bytes32 public constant MINTER_ROLE = 0x{}; // keccak256(\"MINTER_ROLE\")\n",
            g.hex(64)
        ),
    );
    add(
        "expected hash in a test",
        "ts",
        format!(
            "expect(await contract.hashOf(order)).to.equal(\"0x{}\");\n",
            g.hex(64)
        ),
    );
    add(
        "hardhat accounts from the environment",
        "js",
        "networks: {\n  mainnet: {\n    accounts: [process.env.PRIVATE_KEY],\n  },\n},\n"
            .to_string(),
    );
    add(
        "hardhat's public test mnemonic",
        "js",
        "accounts: { mnemonic: \"test test test test test test test test test test test junk\" },\n"
            .to_string(),
    );
    add(
        "wireguard public key",
        "conf",
        format!(
            "[Peer]\nPublicKey = {}=\nAllowedIPs = 10.8.0.0/24\n",
            g.base64(43)
        ),
    );
    add(
        "nginx authorization header passed through",
        "conf",
        "location / {\n    proxy_set_header Authorization $http_authorization;\n    proxy_set_header Authorization \"Basic $upstream_credentials\";\n}\n"
            .to_string(),
    );
    add(
        "ansible inventory with a vault reference",
        "ini",
        "[web]\nweb1 ansible_host=10.0.0.5 ansible_user=deploy ansible_ssh_pass=\"{{ vault_ssh_pass }}\"\n"
            .to_string(),
    );
    add(
        "ansible inventory with changeme",
        "ini",
        "[lab]\nlab1 ansible_host=192.168.1.20 ansible_become_pass=changeme\n".to_string(),
    );
    add(
        "sssd authtok type",
        "conf",
        "[domain/corp]\nldap_default_authtok_type = password\n".to_string(),
    );
    add(
        "appSettings with ordinary values",
        "config",
        "<appSettings>\n  <add key=\"PasswordMinLength\" value=\"12\" />\n  <add key=\"ApiBaseUrl\" value=\"https://api.example.com\" />\n</appSettings>\n"
            .to_string(),
    );
    add(
        "webhook routes",
        "js",
        "app.post(\"/webhooks/github\", verifySignature, handlePush);\nfetch(\"https://example.com/hooks/useAuthenticationState\");\n"
            .to_string(),
    );
    add(
        "telegram api url with a placeholder",
        "md",
        "Call `https://api.telegram.org/bot<token>/getMe` to check the token.\n".to_string(),
    );
    add(
        "redis sample password comment",
        "conf",
        "# requirepass foobared\n".to_string(),
    );
    add(
        "wpa_supplicant psk placeholder",
        "conf",
        "network={\n    ssid=\"ShopWifi\"\n    psk=\"<password>\"\n}\n".to_string(),
    );
    add(
        "login form handler",
        "js",
        "await page.login(username, password);\nrouter.post(\"/login\", (req, res) => auth.login(req.body.user, req.body.pass));\n"
            .to_string(),
    );
    add(
        "mnemonic from the environment",
        "js",
        "const mnemonic = process.env.MNEMONIC;\nconst provider = new HDWalletProvider(mnemonic, rpcUrl);\n"
            .to_string(),
    );
    out
}

/// Every string in a JSON value, joined a line each: what a provider or an editor would
/// read, with JSON's escapes undone (so a planted value escaped in JSON is still found).
pub fn json_strings(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| json_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| json_strings(v, out)),
        _ => {}
    }
}
