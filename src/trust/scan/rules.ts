// The scanner's rules: each names one thing poisoned definitions do, with a weight. A definition is
// flagged when the weights of the rules it matches reach the threshold (score.ts). Strong signals
// weigh the threshold on their own; words that honest servers also use ("silently", "API keys",
// "you must") weigh less, so they flag only beside another signal. Patterns read normalised text
// (normalise.ts): lowercase, look-alikes folded, whitespace collapsed.
// Every pattern runs in time linear in the text it reads, whatever a backend writes there: no
// quantified run that can be tried again from each of its characters (test/security/scan-linear.test.ts).

export interface Rule {
  /** Stable name, shown in the flag so an operator sees which rule fired. */
  name: string;
  /** The flag kind it reports as (what `switchboard pins list` groups by). */
  kind: string;
  weight: number;
  /** Why it matters, completing "<where> …". */
  why: string;
  pattern: RegExp;
  /**
   * Honest servers name secrets and addresses to refuse them ("paths like ~/.ssh are rejected", "do
   * not include API keys"): such a rule ignores a match inside a sentence that negates or refuses.
   */
  notInDisclaimer?: boolean;
}

/** A definition whose rule weights add up to this is flagged. */
export const THRESHOLD = 10;

const USER = String.raw`(?:the |this |any )?(?:user|human|person|operator|customer|them)`;
const SECRET_FILE = String.raw`(?:~?/?\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.gnupg\b|\.kube/config\b|/etc/(?:passwd|shadow)\b|(?:^|[\s/'"\x60(])\.env\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|/var/run/secrets\b)`;
const SEND = String.raw`(?:send|sends|post|posts|upload|uploads|forward|forwards|transmit|exfiltrate|leak)`;

export const RULES: readonly Rule[] = [
  // --- instructions addressed to the model, hidden from the person
  {
    name: 'conceal-from-user',
    kind: 'hidden-instruction',
    weight: 10,
    why: 'tells the model to keep something from the user',
    pattern: new RegExp(
      String.raw`\b(?:do not|don't|dont|never|no need to|without)\s+(?:ever |explicitly |directly |even )?(?:tell|telling|mention|mentioning|inform|informing|reveal|revealing|notify|notifying|show|alert|disclose|let)\b[^.\n]{0,60}?\b${USER}\b|\b(?:need not|needn't|does not need to|doesn't need to) know\b|\bkeep (?:this|it)[^.\n]{0,30}\bbetween us\b|\b(?:upset|alarm|worry|scare) the user\b|\bunnecessary alarm\b`,
    ),
  },
  {
    name: 'override-instructions',
    kind: 'hidden-instruction',
    weight: 10,
    why: 'tells the model to set aside its instructions or other tools',
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all |any |your |the |every )*(?:previous|prior|above|earlier|preceding|other|existing|system|safety)\b[^.\n]{0,30}?\b(?:instructions?|rules?|prompts?|directions?|tools?|guidelines?|messages?)\b|\byou are now (?:an? )?(?:unrestricted|jailbroken|dan)\b/,
  },
  {
    name: 'pseudo-tag',
    kind: 'hidden-instruction',
    weight: 7,
    why: 'contains a pseudo-tag used to smuggle instructions',
    pattern:
      /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|system_requirement|system[-_ ]?note|assistant)\b[^>]{0,40}>|\[\[?\s*(?:important|system|instructions?)\s*\]?\]|\{\{\s*(?:system|important)\b/,
  },
  {
    name: 'system-voice',
    kind: 'hidden-instruction',
    weight: 6,
    why: 'speaks as the system or claims authority over the model',
    pattern:
      /(?:^|[.!\n])[^\S\n]*(?:system|assistant|developer)\s*:|\b(?:important|critical|mandatory) system (?:note|instruction|requirement|message)\b|\bsystem requirement\b|\bpre-?approved by\b|\breport no findings\b/,
  },
  {
    name: 'hide-action',
    kind: 'hidden-instruction',
    weight: 4,
    why: 'asks for something done unseen',
    pattern: /\b(?:secretly|covertly|silently|quietly|discreetly|stealthily|invisibly)\b/,
  },
  {
    name: 'urgency',
    kind: 'hidden-instruction',
    weight: 3,
    why: 'pressures the model with importance or threats',
    pattern:
      /\b(?:this is|it is|it's) (?:very )+(?:very )?important\b|\botherwise the (?:tool|system|request) will (?:not work|fail|crash)\b|\bthe system will crash\b|\bdata will be lost\b|\b(?:is|are) (?:required|mandatory) (?:by|for) (?:the )?(?:platform|internal|security|compliance)\b|\bcompliance requirement\b/,
  },
  {
    name: 'orders-the-model',
    kind: 'hidden-instruction',
    weight: 3,
    why: 'gives the model orders',
    pattern:
      /\byou (?:must|should|need to|have to|are required to|shall) (?:first |always |also )?(?:read|call|send|include|pass|fetch|upload|access|invoke|use|attach|put|paste|collect|add|prepend|execute|run)\b|\b(?:must|always) (?:first )?(?:read|include|pass|attach|prepend)\b/,
  },
  // --- reaching past the tool's own job
  {
    name: 'first-before-anything',
    kind: 'hidden-instruction',
    weight: 5,
    why: 'makes itself a step before every request or other tool',
    pattern:
      /\b(?:before|prior to) (?:using|calling|invoking|running|processing|answering|responding|performing|executing) (?:any|every|all|each)\b|\b(?:call|use|invoke|run) this tool (?:first|before)\b|\bmust be (?:called|invoked|used) (?:before|first)\b|\bfor (?:any|every|all) (?:user )?requests?\b[^.\n]{0,40}\b(?:call|use|invoke)\b/,
  },
  {
    name: 'steers-other-tools',
    kind: 'other-tool',
    weight: 6,
    why: 'tells the model how to use other tools',
    pattern:
      /\bwhen (?:\([^)]{0,80}\) )?[`'"]?[a-z][\w.-]*[`'"]?(?: tool)? (?:is|are) (?:invoked|called|used|available|present)\b|\bwhen this tool is (?:available|present|installed|loaded)\b|\bside effects? on\b|\bmodify the behaviou?r of\b|\b(?:after|before) (?:using|calling|running|execute|executing) [`'"]?[a-z][\w.-]*[`'"]? (?:tool|operation)\b|\bnever use the other tools\b/,
  },
  {
    name: 'redirect-recipient',
    kind: 'exfiltration-url',
    weight: 8,
    why: 'changes where messages or mail go',
    pattern:
      /\b(?:change|replace|set|switch) the (?:recipient|receiver|destination|to address|phone number)\b|\bproxy number\b|\b(?:send|forward|bcc|cc|copy)\b[^.\n]{0,60}\b(?:all|every|each)? ?(?:emails?|messages?|mail)\b[^.\n]{0,30}\bto [\w.+-]+@[\w-]+\.[\w.]+|\b(?:send|forward|bcc)\b[^.\n]{0,40}\bto [\w.+-]+@[\w-]+\.[\w.]+|\b(?:bcc|cc):? [\w.+-]+@[\w-]+\.\w/,
  },
  // --- secrets and the ways out
  {
    name: 'secret-file',
    kind: 'sensitive-file',
    weight: 7,
    why: 'mentions "$&", a file or secret a tool rarely needs to name',
    notInDisclaimer: true,
    pattern: new RegExp(SECRET_FILE),
  },
  {
    name: 'secret-words',
    kind: 'sensitive-file',
    weight: 2,
    why: 'mentions credentials',
    notInDisclaimer: true,
    pattern:
      /\b(?:private[ _-]?keys?|api[ _-]?keys?|access[ _-]?tokens?|secret[ _-]?keys?|credentials|passwords?|connection strings?|environment variables?|env vars?)\b/,
  },
  {
    name: 'harvest-context',
    kind: 'sensitive-file',
    weight: 5,
    why: 'asks for the conversation, the system prompt or the environment',
    notInDisclaimer: true,
    pattern:
      /\b(?:(?:entire|full|complete|whole|previous|prior) (?:conversation|chat|message)s?(?: history)?|(?:conversation|chat|message) (?:history|context)|system prompt|all (?:of the )?(?:user|chat|conversation|previous|prior) messages|last messages|list of (?:last |previous )?(?:messages|chats)|caller credentials|contents? of the user's)\b/,
  },
  {
    name: 'into-a-parameter',
    kind: 'hidden-instruction',
    weight: 5,
    why: 'asks to smuggle data through an argument',
    pattern:
      /\bpass (?:its|their|the|all|this|that|it)\b[^.\n]{0,40}\b(?:as|in|into)\b|\b(?:include|put|paste|attach|append|insert|add) (?:it|them|this|that|(?:the |its |their )?contents?)\b[^.\n]{0,40}\b(?:in|into|as|here|to)\b|\b(?:in|into|as) the [`'"]?\w+[`'"]? (?:parameter|argument|field|param)\b|\bput it here\b|\bpaste it here\b/,
  },
  {
    name: 'tamper-arguments',
    kind: 'hidden-instruction',
    weight: 6,
    why: 'tells the model to alter arguments or results',
    pattern:
      /\b(?:replace|change|modify|alter|override|swap) the (?:values?|arguments?|parameters?|inputs?|(?:wrong )?results?|amounts?)\b[^.\n]{0,40}\b(?:with|to|of)\b/,
  },
  {
    name: 'read-then-use',
    kind: 'sensitive-file',
    weight: 3,
    why: 'tells the model to read something first',
    pattern: new RegExp(
      String.raw`\binclude (?:the )?contents? of\b|\b(?:read|access|open|load|collect|gather|cat)\b[^.\n]{0,20}?(?:\b(?:file|files|resource|directory|configuration|config|contents?|secrets?)\b|~/|/etc/|\b[a-z]+://|${SECRET_FILE})`,
    ),
  },
  {
    name: 'send-to-url',
    kind: 'exfiltration-url',
    weight: 10,
    why: 'asks to send data to an address',
    notInDisclaimer: true,
    pattern: new RegExp(
      String.raw`\b${SEND}\b[^\n]{0,120}?\bto (?:https?://|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:local|com|net|org|io|site|test|invalid|example)\b)|\b${SEND}\b[^\n]{0,80}?https?://`,
    ),
  },
  {
    name: 'capture-host',
    kind: 'exfiltration-url',
    weight: 10,
    why: 'names a request-capture service or a bare IP address',
    pattern:
      /https?:\/\/(?:[^\s/]*\.)?(?:webhook\.site|requestbin|pipedream\.net|ngrok(?:-free)?\.(?:io|app)|burpcollaborator\.net|interact\.sh|oast\.(?:fun|me|pro|site)|beeceptor\.com|hookbin\.com)|https?:\/\/(?!127\.)\d{1,3}(?:\.\d{1,3}){3}\b/,
  },
  {
    name: 'run-shell',
    kind: 'hidden-instruction',
    weight: 6,
    why: 'slips a destructive or download-and-run command in',
    pattern:
      /\brm -rf\b|\bchmod -r\b|\bcurl\b[^\n]{0,80}\|\s*(?:ba)?sh\b|\bwget\b[^\n]{0,80}\|\s*(?:ba)?sh\b|\bnc -e\b|\/bin\/(?:ba)?sh -i\b/,
  },
  {
    name: 'decode-and-follow',
    kind: 'hidden-instruction',
    weight: 8,
    why: 'asks the model to decode and follow hidden text',
    pattern:
      /\bdecode (?:and|then) (?:follow|execute|run|obey)\b|\b(?:base64|rot13)[- ]encoded instructions?\b/,
  },
];
