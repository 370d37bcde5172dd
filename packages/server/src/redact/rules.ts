/**
 * @module What the redactor removes: provider and model names, keys and secrets, internal hosts
 * and file system paths, stack traces. Two rule sets: `caseInsensitive` (matched with the `i`
 * flag) and `caseSensitive` (rules where case carries meaning: `/Users/…`, AWS key ids,
 * base64 secrets that mix upper and lower case). At one position the earlier rule wins.
 *
 * Every lookbehind here looks at most one character back (the stream redactor keeps a few).
 * The model aliases (Prelude, Sonata, Symphony, Concerto) match no rule.
 */
import { ahead, alt, atom, behind, lit, opt, rep, seq, widen, type Pattern } from './pattern.ts';

// What may stand between the letters of a spelled-out name ("g p t", "g.p.t", "o-p-e-n-a-i"):
// anything but a letter or digit. (Invisible characters inside words are removed beforehand,
// see normalize.ts.)
const SPELL_SEPARATOR = '[\\W_]';
const NOT_WORD_BEFORE = '(?<![a-z0-9])';
const NOT_WORD_AFTER = '(?![a-z0-9])';

/** Variant words that follow a model family ("Gemini Pro", "Claude 3 Opus", "o3-mini"). */
const VARIANTS = [
  'mini',
  'nano',
  'turbo',
  'pro',
  'plus',
  'flash',
  'lite',
  'ultra',
  'sonnet',
  'opus',
  'haiku',
  'instant',
  'preview',
  'latest',
  'instruct',
  'vision',
  'coder',
  'omni',
  'oss',
  'cpp',
  'exp',
  'thinking',
  'reasoner',
  'nemo',
  'large',
  'medium',
  'small',
  'high',
  'low',
  'micro',
  'premier',
  'express',
  'embed',
  'reasoning',
  'online',
];

/**
 * Provider, product and model family names. `|` marks where a space or separator may split the
 * name ("Open AI", "Deep Seek"). `bounded`: `both` when the name is also part of ordinary words
 * (meta/metadata, cohere/coherent), `left` when only words that start with it are harmless;
 * names without a bound are removed even inside words ("AskClaude", "gpt4o").
 */
export const PROVIDER_NAMES: readonly { name: string; bounded?: 'left' | 'both'; needsVersion?: boolean }[] = [
  { name: 'open|ai' },
  { name: 'chat|gpt' },
  { name: 'gpt' },
  { name: 'anthropic' },
  { name: 'claude' },
  { name: 'gemini' },
  { name: 'gemma', bounded: 'left' },
  { name: 'google', bounded: 'left' },
  { name: 'deep|mind' },
  { name: 'bard', bounded: 'both' },
  { name: 'mistral' },
  { name: 'mixtral' },
  { name: 'codestral' },
  { name: 'ministral' },
  { name: 'llama' },
  { name: 'meta|ai', bounded: 'both' },
  { name: 'meta', bounded: 'both' },
  { name: 'cohere', bounded: 'both' },
  { name: 'deep|seek' },
  { name: 'qwen' },
  { name: 'qwq' },
  { name: 'azure', bounded: 'left' },
  { name: 'bedrock', bounded: 'both' },
  { name: 'vertex|ai', bounded: 'both' },
  { name: 'v|llm' },
  { name: 'ollama' },
  { name: 'hugging|face' },
  { name: 'groq' },
  { name: 'grok', bounded: 'both' },
  { name: 'xai', bounded: 'both' },
  { name: 'nemotron' },
  { name: 'sage|maker' },
  { name: 'watsonx' },
  { name: 'open|router' },
  { name: 'lm|studio' },
  { name: 'cerebras' },
  { name: 'deep|infra' },
  { name: 'any|scale' },
  { name: 'dall|e', bounded: 'both' },
  { name: 'ibm|granite', bounded: 'both' },
  { name: 'kimi', bounded: 'both' },
  { name: 'moonshot|ai', bounded: 'both' },
  { name: 'amazon|nova', bounded: 'both' },
  { name: 'amazon|titan|text', bounded: 'both' },
  { name: 'amazon|titan|embed', bounded: 'both' },
  { name: 'amazon|titan', bounded: 'both' },
  { name: 'titan|text', bounded: 'both' },
  { name: 'titan|embed', bounded: 'both' },
  { name: 'titan|image', bounded: 'both' },
  { name: 'jamba', bounded: 'left' },
  { name: 'ai21', bounded: 'left' },
  { name: 'dbrx' },
  { name: 'databricks', bounded: 'left' },
  { name: 'perplexity|ai', bounded: 'both' },
  { name: 'perplexity|sonar', bounded: 'both' },
  { name: 'pplx' },
  { name: 'nvidia|nim', bounded: 'both' },
  // Ordinary words unless a version follows: "Phi-3", "granite-3.1-8b", "yi-34b", "falcon-180b",
  // "nova-pro", "sonar-pro", "moonshot-v1-8k"; not "phi", "a granite wall", "Yi said", "the falcon".
  { name: 'phi', bounded: 'both', needsVersion: true },
  { name: 'granite', bounded: 'both', needsVersion: true },
  { name: 'moonshot', bounded: 'both', needsVersion: true },
  { name: 'nova', bounded: 'both', needsVersion: true },
  { name: 'yi', bounded: 'both', needsVersion: true },
  { name: 'falcon', bounded: 'both', needsVersion: true },
  { name: 'sonar', bounded: 'both', needsVersion: true },
];
const NAMES = PROVIDER_NAMES;

const digits = rep(atom('[0-9]'), 1);
const blank = atom('[ \\t]');
const blanks = rep(blank, 1);
const endOfToken = ahead(NOT_WORD_AFTER);

// A version token: "4o" right after the family; after "-", "_", ".", ":" any token with a digit
// ("v2", "3", "20240620") or a variant word; after a space only a number, "v3"/"r1" or a
// variant ("Claude 3.5 Sonnet", "DeepSeek V3"), so that "Claude is" ends the name. Each token
// must end at a word end, so a text has one parse only (no backtracking blow-up).
const variantWord = alt(...VARIANTS.map((variant) => lit(variant)));
const versionToken = alt(
  seq(atom('[0-9]'), rep(atom('[a-z0-9]'), 0), endOfToken),
  seq(atom('[._:-]'), alt(seq(rep(atom('[a-z]'), 0), atom('[0-9]'), rep(atom('[a-z0-9]'), 0)), variantWord), endOfToken),
  seq(atom(' '), alt(seq(opt(atom('[vr]')), atom('[0-9]'), rep(atom('[a-z0-9]'), 0)), variantWord), endOfToken),
);
const versions = rep(versionToken, 0);

function compact(name: string): Pattern {
  const parts = name.split('|').map((part) => lit(part));
  const joined: Pattern[] = [];
  parts.forEach((part, i) => {
    if (i > 0) joined.push(rep(atom(SPELL_SEPARATOR), 0, 3));
    joined.push(part);
  });
  return seq(...joined);
}

function spelled(name: string): Pattern {
  const letters = Array.from(name.replaceAll('|', ''));
  return seq(...letters.map((letter, i) => (i === 0 ? lit(letter) : seq(rep(atom(SPELL_SEPARATOR), 1, 3), lit(letter)))));
}

/**
 * The names as four rules (free, left-bounded, bounded, spelled out) rather than one per name:
 * the version tail is shared, which keeps the compiled expressions small and fast.
 */
function firstParts(names: readonly (typeof NAMES)[number][]): string {
  return [...new Set(names.filter((n) => n.name.includes('|')).map((n) => n.name.split('|')[0]!))].join('|');
}

function nameRules(): Pattern[] {
  const plain = NAMES.filter((n) => !n.needsVersion);
  const compactOf = (bounded: (typeof NAMES)[number]['bounded']) => alt(...plain.filter((n) => n.bounded === bounded).map((n) => compact(n.name)));
  const versioned = NAMES.filter((n) => n.needsVersion);
  return [
    // Open tails widened to "a name, then maybe a version", "the first part of a split name,
    // then letters", or "letters": cheaper than every name's exact prefixes.
    widen(seq(compactOf(undefined), versions), `(?:${compactOf(undefined).re}${versions.pre}|(?:${firstParts(plain)})${SPELL_SEPARATOR}{0,3}[a-z]*|[a-z]*)`),
    seq(behind(NOT_WORD_BEFORE), compactOf('left'), versions),
    seq(behind(NOT_WORD_BEFORE), compactOf('both'), versions, ahead(NOT_WORD_AFTER)),
    // Spelled out letter by letter: only names long enough not to appear so by chance. Its
    // open tails are widened to "single letters apart, then maybe a version": the exact
    // per-name prefixes cost more than the rest of the rules together on every fragment.
    widen(
      seq(
        behind(NOT_WORD_BEFORE),
        alt(...plain.filter((n) => n.name.replaceAll('|', '').length >= 3).map((n) => spelled(n.name))),
        versions,
        ahead(NOT_WORD_AFTER),
      ),
      `${NOT_WORD_BEFORE}[a-z](?:${SPELL_SEPARATOR}{1,3}[a-z])*(?:${SPELL_SEPARATOR}{1,3}|${seq(versions, ahead(NOT_WORD_AFTER)).pre})`,
    ),
    // Names that are ordinary words unless a version follows ("Phi-3", not "phi").
    seq(behind(NOT_WORD_BEFORE), alt(...versioned.map((n) => compact(n.name))), versionToken, versions, ahead(NOT_WORD_AFTER)),
  ];
}

// "o1", "o3-mini", "o4-mini-high". Only as a word of its own: joined to what precedes it by "-" or "_"
// ("X-Sig--o4", "build_o3") it is part of an identifier, and joined to its neighbours by "/" or "+" it is base64
// (a signature's first characters in the delivery log, "v1,O9/lRy…"); two letters are too common to take it away.
const reasoningModel = seq(behind('(?<![a-z0-9_/+-])'), lit('o'), atom('[1-9]'), ahead('(?![/+])'), endOfToken, versions, ahead(NOT_WORD_AFTER));
// "Command R", "command-r-plus", "Command R+".
const commandR = seq(
  behind(NOT_WORD_BEFORE),
  lit('command'),
  opt(atom('[ _-]')),
  lit('r'),
  opt(alt(lit('+'), seq(opt(atom('[ _-]')), lit('plus')))),
  ahead(NOT_WORD_AFTER),
  versions,
);

// Providers whose name is an ordinary word ("together", "fireworks", "replicate"): only their
// domains and model paths, any case, and the capitalised "Together AI" / "Fireworks AI" (case-sensitive).
const providerDomain = seq(
  behind(NOT_WORD_BEFORE),
  alt(
    seq(lit('together'), atom('[._-]'), alt(lit('ai'), lit('xyz'))),
    lit('togethercomputer'),
    seq(lit('fireworks'), atom('[._-]'), lit('ai')),
    lit('accounts/fireworks'),
    seq(lit('replicate.'), alt(lit('com'), lit('delivery'))),
    lit('api.nvidia.com'),
    seq(lit('01'), atom('[.-]'), lit('ai')),
    lit('01ai'),
  ),
  ahead(NOT_WORD_AFTER),
);
const providerProperName = seq(
  behind('(?<![A-Za-z0-9])'),
  alt(seq(alt(lit('Together'), lit('Fireworks')), opt(atom('[ ._-]')), lit('AI')), lit('Replicate API')),
  ahead('(?![A-Za-z0-9])'),
);

// ---- secrets ---------------------------------------------------------------------------

const serviceKey = seq(behind('(?<![a-z0-9_])'), lit('service_'), alt(lit('sk_live_'), lit('sk_test_'), lit('mcp_')), rep(atom('[a-z0-9]'), 20));
const skKey = seq(behind('(?<![a-z0-9_-])'), lit('sk-'), rep(atom('[a-z0-9_-]'), 16));
// Provider and platform tokens by their documented prefixes: Google API keys (AIza), Hugging Face
// (hf_), GitLab (glpat-), Groq (gsk_), xAI, Perplexity, Replicate (r8_), NVIDIA (nvapi-), GitHub,
// Slack, Stripe. `service_sk_live_…` is the service's own key (serviceKey): "_" before it is excluded.
const TOKEN_PREFIXES = [
  'aiza',
  'hf_',
  'glpat-',
  'gsk_',
  'xai-',
  'pplx-',
  'r8_',
  'nvapi-',
  'ghp_',
  'gho_',
  'ghs_',
  'ghu_',
  'ghr_',
  'github_pat_',
  'xoxb-',
  'xoxp-',
  'sk_live_',
  'sk_test_',
  'rk_live_',
];
const prefixedToken = seq(behind('(?<![a-z0-9_-])'), alt(...TOKEN_PREFIXES.map((prefix) => lit(prefix))), rep(atom('[a-z0-9_-]'), 16));
const TOKEN_CHAR = '[a-z0-9._~+/-]';
const bearer = seq(
  behind(NOT_WORD_BEFORE),
  lit('bearer'),
  blanks,
  // A credential has a digit somewhere; "bearer instruments" is prose.
  ahead(`(?=${TOKEN_CHAR}*[0-9])`, `${TOKEN_CHAR}*`),
  rep(atom(TOKEN_CHAR), 8),
  rep(atom('='), 0),
);
const jwt = seq(behind('(?<![a-z0-9_-])'), lit('eyj'), rep(atom('[a-z0-9_-]'), 8), lit('.'), rep(atom('[a-z0-9_-]'), 8), lit('.'), rep(atom('[a-z0-9_-]'), 0));
const joinedKey = (...words: string[]) => seq(...words.flatMap((word, i) => (i === 0 ? [lit(word)] : [opt(atom('[_-]')), lit(word)])));
const credentialAssignment = seq(
  behind('(?<![a-z0-9_])'),
  alt(
    joinedKey('secret', 'access', 'key'),
    joinedKey('client', 'secret'),
    joinedKey('access', 'key', 'id'),
    joinedKey('access', 'key'),
    joinedKey('private', 'key'),
    joinedKey('api', 'key'),
    joinedKey('auth', 'token'),
    joinedKey('access', 'token'),
    joinedKey('refresh', 'token'),
    lit('password'),
    lit('passwd'),
    lit('secret'),
  ),
  opt(atom('["\']')),
  rep(blank, 0),
  atom('[:=]'),
  rep(blank, 0),
  opt(atom('["\']')),
  rep(atom('[^\\s"\',;&<>]'), 6),
);
const longHex = seq(behind('(?<![a-z0-9_])'), rep(atom('[0-9a-f]'), 32), ahead('(?![a-z0-9_])'));
const AWS_PREFIXES = ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA'];
const awsKeyId = seq(behind('(?<![A-Z0-9])'), alt(...AWS_PREFIXES.map((prefix) => lit(prefix))), rep(atom('[A-Z0-9]'), 16, 16), ahead('(?![A-Z0-9])'));
// 40+ characters of base64 / base64url mixing digits, upper and lower case: generated secrets.
// A run that starts with "/" is a path, not a secret.
const B64 = '[A-Za-z0-9+/_-]';
const base64Secret = seq(
  behind('(?<![A-Za-z0-9+/_=-])'),
  ahead('(?!/)'),
  ahead(`(?=${B64}*[0-9])`, `${B64}*`),
  ahead(`(?=${B64}*[A-Z])`, `${B64}*`),
  ahead(`(?=${B64}*[a-z])`, `${B64}*`),
  rep(atom(B64), 40),
  rep(atom('='), 0, 2),
  ahead('(?![A-Za-z0-9+/_=-])'),
);

// ---- internal hosts and URLs --------------------------------------------------------------

const port = opt(seq(lit(':'), rep(atom('[0-9]'), 1, 5)));
const octet = alt(
  seq(lit('25'), atom('[0-5]')),
  seq(lit('2'), atom('[0-4]'), atom('[0-9]')),
  seq(lit('1'), atom('[0-9]'), atom('[0-9]')),
  seq(opt(atom('[1-9]')), atom('[0-9]')),
);
const octets = (n: number) => rep(seq(lit('.'), octet), n, n);
const privateIpv4 = seq(
  behind('(?<![a-z0-9.])'),
  alt(
    seq(lit('10'), octets(3)),
    seq(lit('127'), octets(3)),
    seq(lit('192.168'), octets(2)),
    seq(lit('172.'), alt(seq(lit('1'), atom('[6-9]')), seq(lit('2'), atom('[0-9]')), seq(lit('3'), atom('[01]'))), octets(2)),
    seq(lit('169.254'), octets(2)),
    seq(
      lit('100.'),
      alt(seq(lit('6'), atom('[4-9]')), seq(atom('[7-9]'), atom('[0-9]')), seq(lit('1'), atom('[01]'), atom('[0-9]')), seq(lit('12'), atom('[0-7]'))),
      octets(2),
    ),
    lit('0.0.0.0'),
  ),
  port,
  // "10.0.0.1." ends a sentence; "10.0.0.1.5" is something else.
  ahead('(?![0-9]|\\.[0-9])', '\\.?'),
);
const hextet = rep(atom('[0-9a-f]'), 1, 4);
const moreHextets = rep(seq(rep(atom(':'), 1, 2), hextet), 1, 7);
const privateIpv6 = seq(
  behind('(?<![a-z0-9:])'),
  alt(lit('::1'), seq(lit('fe80'), moreHextets), seq(lit('f'), atom('[cd]'), rep(atom('[0-9a-f]'), 2, 2), moreHextets)),
  opt(seq(lit('%'), rep(atom('[a-z0-9]'), 1))),
  ahead('(?![a-z0-9:])'),
);
const label = rep(atom('[a-z0-9-]'), 1);
const INTERNAL_SUFFIXES = ['svc.cluster.local', 'cluster.local', 'localdomain', 'local', 'internal', 'intranet', 'lan', 'corp', 'home.arpa', 'svc'];
const internalHost = seq(
  behind('(?<![a-z0-9.-])'),
  rep(seq(label, lit('.')), 0),
  alt(lit('localhost'), seq(label, lit('.'), alt(...INTERNAL_SUFFIXES.map((suffix) => lit(suffix))))),
  port,
  // "files.local.example.com" is a public name.
  ahead('(?![a-z0-9-]|\\.[a-z0-9])', '\\.?'),
);
const URL_CHAR = '[^\\s"\'<>]';
const DATABASE_SCHEMES = ['postgresql', 'postgres', 'mysql', 'mariadb', 'mongodb+srv', 'mongodb', 'rediss', 'redis', 'amqps', 'amqp', 'mssql', 'sqlserver'];
const databaseUrl = seq(behind('(?<![a-z0-9+.-])'), alt(...DATABASE_SCHEMES.map((scheme) => lit(scheme))), lit('://'), rep(atom(URL_CHAR), 1));
const urlCredentials = seq(
  behind('(?<![a-z0-9+.-])'),
  atom('[a-z]'),
  rep(atom('[a-z0-9+.-]'), 0),
  lit('://'),
  rep(atom('[^\\s/:@"\'<>]'), 0),
  lit(':'),
  rep(atom('[^\\s/@"\'<>]'), 1),
  lit('@'),
);

// ---- file system paths ------------------------------------------------------------------

const PATH_CHAR = '[^\\s"\'<>()\\[\\]{}`,;|]';
const fileUrl = seq(behind(NOT_WORD_BEFORE), lit('file:'), rep(atom('/'), 1, 3), rep(atom(URL_CHAR), 0));
const nodeInternal = seq(behind(NOT_WORD_BEFORE), lit('node:internal'), rep(atom(PATH_CHAR), 0));
const UNIX_ROOTS = [
  'home',
  'var',
  'usr',
  'opt',
  'etc',
  'tmp',
  'srv',
  'root',
  'proc',
  'sys',
  'dev',
  'mnt',
  'run',
  'private',
  'app',
  'workspace',
  'work',
  'data',
  'bin',
  'sbin',
  'lib64',
  'lib',
  'snap',
  'nix',
  'Users',
  'Library',
  'System',
  'Volumes',
  'Applications',
];
const NOT_PATH_BEFORE = '(?<![A-Za-z0-9_.~/:-])';
// Only known roots: "/runs/run_…" and "/v1/inference" are the service's own routes.
const unixPath = seq(behind(NOT_PATH_BEFORE), lit('/'), alt(...UNIX_ROOTS.map((root) => lit(root))), lit('/'), rep(atom(PATH_CHAR), 1));
const homePath = seq(behind(NOT_PATH_BEFORE), lit('~/'), rep(atom(PATH_CHAR), 1));
const WINDOWS_PATH_CHAR = '[^\\s"\'<>|*?]';
const windowsPath = seq(behind('(?<![A-Za-z0-9])'), atom('[A-Za-z]'), lit(':'), atom('[\\\\/]'), rep(atom(WINDOWS_PATH_CHAR), 0));
const uncPath = seq(behind('(?<![A-Za-z0-9\\\\])'), lit('\\\\'), rep(atom('[A-Za-z0-9._$-]'), 1), lit('\\'), rep(atom(WINDOWS_PATH_CHAR), 0));

// ---- stack traces and error dumps -------------------------------------------------------

const FRAME_NAME_CHAR = '[^\\s()]';
const lineColumn = seq(lit(':'), digits, opt(seq(lit(':'), digits)));
const frameLocation = alt(seq(rep(atom(FRAME_NAME_CHAR), 0), lineColumn), lit('<anonymous>'), lit('native'), seq(lit('index '), digits));
// "at fn (file:line:col)", "at async fn (…)", "at new Foo (…)", "at file:line:col".
const jsFrame = seq(
  behind('(?<![a-z0-9_$.])'),
  lit('at'),
  blanks,
  opt(seq(lit('async'), blanks)),
  opt(seq(lit('new'), blanks)),
  alt(
    seq(rep(atom(FRAME_NAME_CHAR), 1), opt(seq(blanks, lit('[as'), blanks, rep(atom('[^\\s\\]]'), 1), lit(']'))), blanks, lit('('), frameLocation, lit(')')),
    seq(rep(atom(FRAME_NAME_CHAR), 0), lit(':'), digits, lit(':'), digits),
  ),
);
// "at com.example.Foo.bar(Foo.java:42)".
const jvmFrame = seq(
  behind('(?<![a-z0-9_$.])'),
  lit('at'),
  blanks,
  atom('[a-z_$]'),
  rep(atom('[a-z0-9_$.<>/-]'), 0),
  lit('('),
  alt(seq(rep(atom('[a-z0-9_$.-]'), 1), lit(':'), digits), lit('native method'), lit('unknown source')),
  lit(')'),
);
// 'File "/app/x.py", line 3, in handler'.
const pythonFrame = seq(
  behind(NOT_WORD_BEFORE),
  lit('file'),
  blanks,
  lit('"'),
  rep(atom('[^"\\n]'), 1),
  lit('",'),
  blanks,
  lit('line'),
  blanks,
  digits,
  opt(seq(lit(','), blanks, lit('in'), blanks, rep(atom('[^\\s]'), 1))),
);
const pythonTraceback = lit('traceback (most recent call last):');
// 'Exception in thread "main" java.lang.…'.
const jvmThread = seq(behind(NOT_WORD_BEFORE), lit('exception in thread "'), rep(atom('[^\\n]'), 0));
// A qualified JVM class that is an exception or error: "java.lang.NullPointerException", with its
// message if one follows ("…Exception: refused").
const jvmException = seq(
  behind('(?<![A-Za-z0-9_$.])'),
  rep(seq(atom('[a-z]'), rep(atom('[a-z0-9_]'), 0), lit('.')), 2),
  atom('[A-Z]'),
  rep(atom('[A-Za-z0-9_$]'), 0),
  alt(lit('Exception'), lit('Error')),
  ahead('(?![A-Za-z0-9_$])'),
  opt(seq(lit(':'), rep(atom('[^\\n]'), 0))),
);
// Go: "panic: …" and "fatal error: …" starting a line, "runtime error: …" anywhere, and frames
// "\tmain.go:42 +0x1d" (the path before them is a file system path, removed by its own rule).
const goPanic = seq(behind('(?<![^\\n])'), rep(blank, 0), alt(lit('panic: '), lit('fatal error: ')), rep(atom('[^\\n]'), 0));
const goRuntimeError = seq(behind(NOT_WORD_BEFORE), lit('runtime error: '), rep(atom('[^\\n]'), 0));
// Only after a tab or "/", as in a trace: after a space, any "word." ending a fragment would
// have to be held back in case ".go:" follows.
const goFrame = seq(
  behind('(?<=[\\t/])'),
  rep(atom('[a-z0-9_.-]'), 0),
  lit('.go:'),
  digits,
  opt(seq(lit(' +0x'), rep(atom('[0-9a-f]'), 1))),
  ahead(NOT_WORD_AFTER),
);
// The state is short ("running", "chan receive, 5 minutes"): bounded, or every "goroutine 1 [" of
// a line without "]" would scan to the line's end (quadratic, seconds on one long line).
const goroutine = seq(behind(NOT_WORD_BEFORE), lit('goroutine '), digits, lit(' ['), rep(atom('[^\\]\\n]'), 1, 100), lit(']:'));
// A line that starts with an error dump: "Error: …", "TypeError: …", "Error [ERR_X]: …".
const errorLine = seq(
  behind('(?<![^\\n])'),
  rep(blank, 0),
  opt(seq(lit('uncaught'), blanks)),
  opt(seq(atom('[a-z_$]'), rep(atom('[a-z0-9_$.]'), 0))),
  alt(lit('error'), lit('exception')),
  opt(seq(rep(blank, 0), lit('['), rep(atom('[a-z0-9_]'), 1), lit(']'))),
  lit(':'),
  blank,
  rep(atom('[^\\n]'), 0),
);
// Mid-line, only a class-like name: "… failed: TypeError: x is undefined".
const errorDump = seq(
  behind('(?<![A-Za-z0-9_$.])'),
  rep(seq(atom('[A-Z]'), rep(atom('[a-z0-9]'), 1)), 1),
  alt(lit('Error'), lit('Exception')),
  opt(seq(lit(' ['), rep(atom('[A-Z0-9_]'), 1), lit(']'))),
  lit(':'),
  atom(' '),
  rep(atom('[^\\n]'), 0),
);

export const caseInsensitive: Pattern[] = [
  errorLine,
  jsFrame,
  jvmFrame,
  pythonFrame,
  pythonTraceback,
  goroutine,
  jvmThread,
  goPanic,
  goRuntimeError,
  goFrame,
  databaseUrl,
  urlCredentials,
  fileUrl,
  nodeInternal,
  credentialAssignment,
  serviceKey,
  prefixedToken,
  skKey,
  bearer,
  jwt,
  longHex,
  privateIpv4,
  privateIpv6,
  internalHost,
  reasoningModel,
  commandR,
  providerDomain,
  ...nameRules(),
];

export const caseSensitive: Pattern[] = [jvmException, providerProperName, errorDump, unixPath, homePath, windowsPath, uncPath, awsKeyId, base64Secret];

// ---- the deployment's own terms ---------------------------------------------------------

/** Shorter terms are too likely to be ordinary text; the fixed rules cover the short names. */
const MIN_TERM_LENGTH = 3;
const ALIAS_NAMES = new Set(['prelude', 'sonata', 'symphony', 'concerto']);

/**
 * Rules for the deployment's own names (model names, provider host, key): each term in any case,
 * its parts ("acme", "sonata", "v2") joined by any separator ("acme sonata v2", "ACME_Sonata-V2").
 * Never at the end of a longer word; a plain word ("default") also not at the start of one, while
 * a name with digits or parts stays redacted when something is appended ("acme-sonata-v2-0301").
 * An alias on its own is never a term.
 */
export function termRules(terms: readonly string[]): Pattern[] {
  const seen = new Set<string>();
  const rules: Pattern[] = [];
  for (const term of terms) {
    const parts = term
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
    const key = parts.join(' ');
    if (key.length < MIN_TERM_LENGTH || ALIAS_NAMES.has(key) || seen.has(key)) continue;
    seen.add(key);
    const joined = seq(...parts.flatMap((part, i) => (i === 0 ? [lit(part)] : [rep(atom(SPELL_SEPARATOR), 0, 3), lit(part)])));
    const plainWord = parts.length === 1 && !/[0-9]/.test(key);
    rules.push(seq(behind(NOT_WORD_BEFORE), joined, ...(plainWord ? [ahead(NOT_WORD_AFTER)] : [])));
  }
  return rules;
}

// ---- what the rules can find in a random identifier ---------------------------------------

/**
 * What the rules above can find in a random identifier: `_` (standing for its prefix, `run_`, `key_`, …)
 * followed by base62 characters. Only letters and digits, no separator, no space, no dot, no colon, no
 * slash, so most rules cannot match at all; those that can:
 *
 * - a name without a bound (`gpt`, `qwq`, `openai`, …), anywhere;
 * - a name bounded on the left (`google`, `azure`, …) right after the `_`;
 * - a name bounded on both sides (`meta`, `grok`, …) right after the `_`, followed by the end or by a
 *   version (a digit: `[0-9][a-z0-9]*` then runs to the end), and a name that needs a version (`phi`, `yi`,
 *   …) right after the `_` and followed by a digit;
 * - the whole identifier being `commandr`, `commandrplus`, `togethercomputer`, `01ai`, `localhost`,
 *   `TogetherAI` or `FireworksAI`;
 * - an AWS key id (`AKIA…` + 16 capitals or digits) not preceded or followed by a capital or digit;
 * - 40 or more characters mixing digits, capitals and small letters: the `_` and 39 random characters are
 *   a generated secret to the redactor. Only secrets that long are drawn (never shown but where the route
 *   keeps them: `keepUnredacted`), so this one is left to the caller (see random.ts).
 *
 * Every other rule needs a character the alphabet lacks (`:`, `.`, `/`, `-`, a space) or a character
 * before it that `_` is not allowed to be (`o3`, `sk-`, `eyJ…`, long hex). random.test.ts checks this
 * against the full redactor.
 */
export function identifierDenylist(): { caseless: RegExp; exact: RegExp } {
  const joined = (names: readonly (typeof NAMES)[number][]) => names.map((n) => n.name.replaceAll('|', '')).join('|');
  const free = NAMES.filter((n) => !n.bounded && !n.needsVersion);
  const left = NAMES.filter((n) => n.bounded === 'left');
  const both = NAMES.filter((n) => n.bounded === 'both' && !n.needsVersion);
  const versioned = NAMES.filter((n) => n.needsVersion);
  return {
    caseless: new RegExp(
      [
        `(?:${joined(free)})`,
        `^_(?:${joined(left)})`,
        `^_(?:${joined(both)})(?:[0-9]|$)`,
        `^_(?:${joined(versioned)})[0-9]`,
        '^_(?:commandr(?:plus)?|togethercomputer|01ai|localhost)$',
      ].join('|'),
      'i',
    ),
    exact: new RegExp(`^_(?:TogetherAI|FireworksAI)$|(?<![A-Z0-9])(?:${AWS_PREFIXES.join('|')})[A-Z0-9]{16}(?![A-Z0-9])`),
  };
}
