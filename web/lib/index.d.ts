// Type declarations for attnlens (hand-written; the runtime is web/lib/api.js).
//
// Conventions: every matrix is a row-major Float32Array; "n x d" means n rows
// of d values. Inputs are copied, never kept or modified. Every function
// validates its arguments before WebAssembly runs and throws a TypeError
// (wrong kind of value) or RangeError (right kind, unusable value) whose
// message names the argument and the expected and actual value; the module
// keeps working after any such error. Results are fresh arrays, except those
// a caller hands in through `into` (see {@link AttentionInto}).

/**
 * The WebAssembly builds, fastest first: `'relaxed'` adds relaxed SIMD (fused
 * multiply-add via `f32x4.relaxed_madd`; Chromium validates it, Node 20 only
 * with `--experimental-wasm-relaxed-simd`), `'simd'` is plain simd128,
 * `'scalar'` uses no SIMD.
 */
export type SimdLevel = 'relaxed' | 'simd' | 'scalar';

/** Options of {@link load}. */
export interface LoadOptions {
  /**
   * A level runs that module and rejects with an Error where the engine cannot
   * run it (`'relaxed'` without relaxed SIMD, `'simd'` without simd128).
   * `true` requires SIMD (the best SIMD level there is), `false` is
   * `'scalar'`. Default: the best level the engine validates.
   */
  simd?: SimdLevel | boolean;
}

/**
 * Options of {@link Lens.attention}: scaled dot-product attention for one head,
 * or for `heads` independent heads stacked in each array (one call does them
 * all, faster than one call per head).
 */
export interface AttentionOptions {
  /** Queries, m x dk (heads x m x dk: head h at offset h*m*dk). */
  q: Float32Array;
  /** Keys, n x dk (heads x n x dk). */
  k: Float32Array;
  /** Values, n x dv (heads x n x dv). */
  v: Float32Array;
  /** Rows of q (queries). Positive integer. */
  m: number;
  /** Rows of k and v (keys). Positive integer. */
  n: number;
  /** Width of q and k. Positive integer. */
  dk: number;
  /** Width of v. Positive integer. */
  dv: number;
  /** Number of stacked heads in q, k and v. Positive integer. Default 1. */
  heads?: number;
  /**
   * Causal mask: query i sees keys j <= i + (n - m), i.e. the queries are the
   * last m positions of the key sequence. Default false.
   */
  causal?: boolean;
  /** n entries; 0 hides that key from every query (of every head), nonzero keeps it. Default: keep all. */
  keyMask?: Uint8Array | null;
  /** Multiplies the raw scores q·k. Finite. Default 1 / sqrt(dk). */
  scale?: number;
  /** Scaled scores are divided by it before the softmax. Finite, > 0. Default 1. */
  temperature?: number;
  /**
   * `false` returns the output only (`weights: null`) and never forms the
   * m x n weights: keys are processed in blocks with an online softmax, so the
   * extra WebAssembly memory is O(n*d) and long sequences (n = 16384 and
   * beyond) fit. The output equals the one computed with weights to float
   * rounding. Default true.
   */
  weights?: boolean;
  /** Preallocated arrays to fill instead of fresh ones (see {@link AttentionInto}). */
  into?: AttentionInto | null;
}

/**
 * Preallocated result arrays, reused across calls: each one given must be a
 * Float32Array of exactly the result's length (output heads x m x dv,
 * weights heads x m x n); it is overwritten and returned as that result, and
 * an output left out comes in a fresh array as usual. Copying into an array
 * whose memory is already mapped skips the first-touch page faults a fresh
 * array pays on every call: 48 MB of weights come out in 3-9 ms instead of
 * 31-74 ms, in Node and Chromium alike (web/docs/performance.md). A wrong type or length,
 * `weights` with `weights: false`, or two outputs sharing memory throw before
 * anything runs; a call that throws leaves the arrays unchanged.
 */
export interface AttentionInto {
  output?: Float32Array | null;
  weights?: Float32Array | null;
}

/** Result of {@link Lens.attention} with `weights: false`. */
export interface AttentionOutputOnly {
  /** m x dv (heads x m x dv), as in {@link AttentionResult}. */
  output: Float32Array;
  /** Always null: the weights were not computed. */
  weights: null;
}

/** Result of {@link Lens.attention}. */
export interface AttentionResult {
  /** m x dv (heads x m x dv): weights times v. A query whose keys are all masked gets a zero row. */
  output: Float32Array;
  /** m x n (heads x m x n): softmax(q kᵀ · scale / temperature) per row; rows sum to 1 (or are all 0 when fully masked). */
  weights: Float32Array;
}

/** Options of {@link Lens.multiHeadAttention} and {@link Lens.explainMatrices}. */
export interface MultiHeadOptions {
  /** The queries' sequence, n x dModel. */
  x: Float32Array;
  /** Rows of x (tokens). Positive integer. */
  n: number;
  /** Model width. Positive integer divisible by heads. */
  dModel: number;
  /** Number of heads; head h uses columns h*dModel/heads .. (h+1)*dModel/heads - 1. */
  heads: number;
  /** dModel x dModel, applied as x·wq. */
  wq: Float32Array;
  /** dModel x dModel, applied as context·wk (x·wk for self-attention). */
  wk: Float32Array;
  /** dModel x dModel, applied as context·wv (x·wv for self-attention). */
  wv: Float32Array;
  /** dModel x dModel, applied to the concatenated heads. */
  wo: Float32Array;
  /** Optional biases, dModel each, added after the matching projection. Default: zero. */
  bq?: Float32Array | null;
  bk?: Float32Array | null;
  bv?: Float32Array | null;
  bo?: Float32Array | null;
  /** Cross-attention: keys and values come from this nContext x dModel sequence. */
  context?: Float32Array | null;
  /** Rows of context; required exactly when context is given. */
  nContext?: number;
  /** Causal mask, aligned to the end when there are more keys than queries. Default false. */
  causal?: boolean;
  /** nKeys entries (nContext with a context, else n); 0 hides that key. */
  keyMask?: Uint8Array | null;
  /** Scaled scores are divided by it. Finite, > 0. Default 1. */
  temperature?: number;
  /**
   * Preallocated arrays to fill (multiHeadAttention only), as {@link AttentionInto}:
   * output n x dModel, weights heads x n x nKeys.
   */
  into?: AttentionInto | null;
}

/** Result of {@link Lens.multiHeadAttention}; nKeys = nContext with a context, else n. */
export interface MultiHeadResult {
  /** n x dModel: concat(head outputs)·wo + bo. */
  output: Float32Array;
  /** heads x n x nKeys, indexed [head][query][key]. */
  weights: Float32Array;
}

/** Options of {@link Lens.explainMatrices}: like multi-head attention, with defaults for teaching. */
export interface ExplainMatricesOptions extends Omit<MultiHeadOptions, 'heads' | 'wo' | 'into'> {
  /** Default 1. */
  heads?: number;
  /** Default: the identity, so the output is the concatenated heads. */
  wo?: Float32Array | null;
}

/** Options of {@link Lens.explainSentence}. */
export interface ExplainSentenceOptions {
  /** The sentence: words and punctuation become tokens (at most {@link Lens.maxTokens}). */
  text: string;
  /** A second sentence for cross-attention: its tokens are the keys and values. */
  context?: string | null;
  /** Model width, 1..1024, divisible by heads. Default 64. */
  dModel?: number;
  /** Default 4. */
  heads?: number;
  /** Seed of the random projections, integer 0..2³²-1. Default 1. */
  seed?: number;
  /** Default false. */
  causal?: boolean;
  /** Finite, > 0. Default 1. */
  temperature?: number;
  /** Use identity projections (W = I), so attention is the similarity of the embeddings. Default false. */
  identity?: boolean;
}

/**
 * Every step of multi-head attention. Shapes use n = queries, nContext = keys
 * (equal to n for self-attention), d = dModel.
 */
/**
 * The one record of a multi-head layer, the same for random projections
 * (explainSentence), your matrices (explainMatrices) and a model's layer
 * (model.explain): the C++ core fills every key but elapsedMs (and a model's
 * tokens, ids and head), and the API passes it on unchanged.
 */
export interface Explanation {
  /** The query tokens (explainSentence), or null (explainMatrices). */
  tokens: string[] | null;
  /** The key/value tokens (the context's, or the same as tokens), or null (explainMatrices). */
  contextTokens: string[] | null;
  n: number;
  nContext: number;
  dModel: number;
  heads: number;
  /** The width of each head's slice of q, k and v: dModel / heads but for some Llama models. */
  headWidth: number;
  /** The score multiplier the scores were multiplied by before temperature: 1 / sqrt(headWidth), or a model's own (GPT-Neo: 1). */
  scale: number;
  /**
   * The temperature the scaled scores were divided by (1 for models), as the
   * shortest decimal of its float32 value (0.7 stays 0.7).
   */
  temperature: number;
  /** Whether each query saw only itself and earlier keys. */
  causal: boolean;
  /** A copy of the key mask the call was given (1 = keep, 0 = hidden), or null. */
  keyMask: Uint8Array | null;
  /** Whether keys and values came from a second sequence (context). */
  crossAttention: boolean;
  /** With causal: each query saw only the `window` keys ending at its own position (Mistral, GPT-Neo's local layers); 0: no window. */
  window: number;
  /** Whether Q, K and V had biases added (GPT-2, BERT, Qwen2; not Llama). */
  qkvBias: boolean;
  /** Whether the output had a bias b_O added. */
  outputBias: boolean;
  /** model.explain: whether a score bias was added to the scores before the scale (T5's relative position bias, its self-attention). */
  positionBias?: boolean;
  /** The model's architecture (model.explain), or null (random projections, your matrices). */
  architecture: 'gpt2' | 'bert' | 'llama' | 'gpt_neox' | 'gpt_neo' | 'opt' | 'phi' | 'bart' | 't5' | null;
  /** model.explain: the norm the layer's input went through: LayerNorm, RMSNorm, or Gemma's RMSNorm scaling by (1 + w). */
  norm?: 'layer' | 'rms' | 'rms_plus_one';
  /** model.explain: learned position embeddings added to the input, rotary embeddings turning Q and K, Marian's sinusoids, or T5's relative position bias. */
  position?: 'learned' | 'rotary' | 'sinusoidal' | 'relative';
  /** model.explain: the columns of each query and key head rotary turned (headWidth, or fewer with partial rotary); 0 for learned positions. */
  rotaryWidth?: number;
  /** model.explain: attention and MLP both read the layer's input, x + attn(norm1(x)) + mlp(norm2(x)) (GPT-NeoX, Phi). */
  parallelResidual?: boolean;
  /** model.explain: the norm follows each residual sum, norm(x + half(x)) (BERT). */
  postNorm?: boolean;
  /** Key/value heads: fewer than heads with grouped-query attention; equal to heads otherwise. */
  kvHeads: number;
  /** n x d: the input (for sentences: token embedding + sinusoidal position). */
  x: Float32Array;
  /** nContext x d: the keys' input (a copy of x for self-attention, models included). */
  contextX: Float32Array;
  /** d x w each, w = heads * headWidth (d but for some Llama models): [in, out]. */
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
  /** w x d. */
  wo: Float32Array;
  /** n x w: x·wq (+ bq); head h is columns h*headWidth ... */
  q: Float32Array;
  /** nContext x w. */
  k: Float32Array;
  /** nContext x w. */
  v: Float32Array;
  /** heads x n x nContext: q_h·k_hᵀ, [head][query][key]. */
  scores: Float32Array;
  /** heads x n x nContext: scores · scale / temperature; masked entries are -Infinity. */
  scaledScores: Float32Array;
  /** heads x n x nContext: softmax of each row of scaledScores. */
  weights: Float32Array;
  /** n x w: the heads' outputs side by side. */
  concatenatedHeads: Float32Array;
  /** n x d: concatenatedHeads·wo (+ bo). */
  output: Float32Array;
  /** Milliseconds spent in the WebAssembly call. */
  elapsedMs: number;
}

/** The attnlens API over one loaded WebAssembly module. No handles to free. */
export interface Lens {
  /** The package version, e.g. "0.1.0". */
  readonly version: string;
  /** True when a SIMD module runs ('relaxed' or 'simd'), false for the scalar fallback. */
  readonly simd: boolean;
  /** Which module runs: 'relaxed', 'simd' or 'scalar'. */
  readonly simdLevel: SimdLevel;
  /**
   * Threads large calls may use (attention heads, multi-head layers, model forward passes): 2 for
   * the threads modules, which browsers load on cross-origin isolated pages, otherwise 1.
   */
  readonly threads: number;
  /** The most tokens explainSentence accepts per sentence (1024). */
  readonly maxTokens: number;
  /** Scaled dot-product attention for one head, or several stacked heads (`heads`). */
  attention(options: AttentionOptions & { weights: false }): AttentionOutputOnly;
  attention(options: AttentionOptions & { weights?: true }): AttentionResult;
  attention(options: AttentionOptions): AttentionResult | AttentionOutputOnly;
  /** Multi-head (self- or cross-) attention. */
  multiHeadAttention(options: MultiHeadOptions): MultiHeadResult;
  /** Multi-head attention on your matrices, returning every intermediate step. */
  explainMatrices(options: ExplainMatricesOptions): Explanation;
  /**
   * Text to attention with every intermediate step: tokens, deterministic
   * embeddings plus sinusoidal positions, seeded random projections.
   */
  explainSentence(options: ExplainSentenceOptions): Explanation;
  /**
   * Loads a Hugging Face checkpoint (GPT-2, BERT or Llama family) into this module:
   * its weights are converted to float32 and packed for the SIMD kernels once.
   * Either the files' contents ({@link LoadModelOptions}), or where to find them
   * ({@link LoadModelFromOptions}: a hub name, a URL, a local folder in Node),
   * downloaded with progress and kept in a cache. A failed download rejects with a
   * {@link DownloadError}, whose `reason` says what kind of failure it is.
   *
   * @example
   * const model = await lens.loadModel({ from: 'openai-community/gpt2' });
   * const { attention, tokens } = model.run({ text: 'The cat sat.' });
   */
  loadModel(options: LoadModelOptions | LoadModelFromOptions): Promise<Model>;
  /** Bytes currently allocated in the WebAssembly heap; constant between calls (no leaks). */
  heapBytesInUse(): number;
}

/** The bytes of one file: what `fetch(...).arrayBuffer()` or `fs.readFile` gives. */
export type FileBytes = Uint8Array | ArrayBuffer;

/** What a tokenizer may be loaded from. */
export type TokenizerSource =
  /** tokenizer.json, parsed or as text. */
  | object | string
  /** GPT-2's older files: vocab.json (parsed or text) and merges.txt. */
  | { vocabJson: object | string; mergesTxt: string }
  /** BERT's vocab.txt. */
  | { vocabTxt: string }
  /** A sentencepiece .model file (tokenizer.model, spiece.model, sentencepiece.bpe.model), for folders without tokenizer.json. */
  | { sentencepieceModel: FileBytes }
  /**
   * An opus-mt (Marian) folder's source.spm and target.spm (sentencepiece models) and vocab.json:
   * text is read with source.spm, an encoder-decoder's target text with target.spm, and decode
   * (generate's text too) writes with target.spm, as transformers' MarianTokenizer does.
   */
  | { sourceSpm: FileBytes; targetSpm: FileBytes; vocabJson: object | string };

export interface LoadModelOptions {
  /** config.json, parsed or as text. */
  config: object | string;
  /**
   * model.safetensors, or an older folder's pytorch_model.bin (torch.save's zip archive, read by a
   * restricted pickle reader that refuses anything but tensors), or every shard of a sharded
   * checkpoint. F32, F16 and BF16.
   */
  weights: FileBytes | FileBytes[];
  /** Without one, run() and explain() take ids only. */
  tokenizer?: TokenizerSource;
  /** tokenizer_config.json, parsed or as text: its add_bos_token / add_eos_token (Llama family) decide the special tokens. */
  tokenizerConfig?: object | string;
  /** Called as the weights are converted (phase 'weights') and once at the end (phase 'done'). */
  onProgress?: (progress: { phase: 'weights' | 'done'; done: number; total: number }) => void;
  /**
   * How the matrices of an F16/BF16 checkpoint are held in WebAssembly memory. 'float32' converts
   * them at load (the fastest); 'as-stored' keeps them at 2 bytes a weight (half the memory, the
   * same results bit for bit, 5-15% slower). 'auto' (the default): float32 unless the model
   * would not fit in the module's 2 GiB that way. F32 checkpoints are float32 whatever is asked.
   */
  weightStorage?: 'auto' | 'float32' | 'as-stored';
}

/** Download progress of {@link Lens.loadModel} with `from`: one event per chunk of each weight file. */
export interface DownloadProgress {
  phase: 'download';
  /** The weight file: 'model.safetensors', 'pytorch_model.bin' or a shard's name. */
  file: string;
  /** Its place among the weight files (0-based), and how many there are. */
  index: number;
  count: number;
  /** Bytes of this file so far, and its size (known up front when the server says: HEAD, Content-Length). */
  loaded: number;
  total: number;
  /** Bytes of all the weight files so far, and their total size. */
  loadedBytes: number;
  totalBytes: number;
  /** True when the file was read from the cache, not downloaded. */
  cached: boolean;
}

/** Where {@link Lens.loadModel} finds a model, downloads it and keeps it. */
export interface LoadModelFromOptions {
  /**
   * A hub model name ('openai-community/gpt2'), a hub URL (the repository page, .../tree/main,
   * .../resolve/main/, a file in it), any http(s) folder URL holding the same files, or in Node
   * a local folder path or `file:` URL (read in place, never cached; 'owner/name' is a hub name
   * unless a folder of that name exists, as in transformers). The folder's config.json, tokenizer
   * (tokenizer.json, else vocab.json + merges.txt, else vocab.txt; plus tokenizer_config.json when
   * present) and weights (model.safetensors, else the shards model.safetensors.index.json names,
   * else pytorch_model.bin, else the shards pytorch_model.bin.index.json names) are loaded as by `{ config, weights, tokenizer, tokenizerConfig }`.
   */
  from: string;
  /** The hub revision: a branch, tag or commit (resolve/<revision>/). Default 'main'. Hub models only. */
  revision?: string;
  /**
   * The hub's base URL, for a mirror or a private hub. Default 'https://huggingface.co'; in Node the
   * HF_ENDPOINT environment variable when set (as transformers and huggingface_hub read it).
   */
  endpoint?: string;
  /** Aborts the download (or the conversion): the load rejects with an AbortError and keeps no memory. */
  signal?: AbortSignal;
  /** Download progress per file and in total ('download'), then the conversion ('weights', 'done'). */
  onProgress?: (progress: DownloadProgress | { phase: 'weights' | 'done'; done: number; total: number }) => void;
  /**
   * Where downloads are kept, keyed by folder URL and revision: a second load of the same model
   * makes no request. `true` (the default): Cache Storage in browsers (the cache 'attnlens-models'),
   * in Node the folder $XDG_CACHE_HOME/attnlens, else ~/.cache/attnlens. A string: the Cache
   * Storage name (browsers) or the folder (Node). `false`: no cache.
   */
  cache?: boolean | string;
  /** As in {@link LoadModelOptions}. */
  weightStorage?: 'auto' | 'float32' | 'as-stored';
  /** The files are found from `from`: giving them too is a TypeError. */
  config?: never;
  weights?: never;
  tokenizer?: never;
  tokenizerConfig?: never;
}

/**
 * What kind of failure a download of {@link Lens.loadModel} with `from` met, as `error.reason`: for programs
 * that act on it (choose their own advice, retry) without reading the message, whose words may change.
 * - 'not-found': a missing model, revision or file (HTTP 404, a local folder's missing file, a folder without weights);
 * - 'needs-login': a gated or private model (HTTP 401 or 403);
 * - 'http-error': any other HTTP answer that is not a success (its `status` says which);
 * - 'unreachable': no answer came back (offline, the server unreachable, or a refusal by CORS: browsers do not tell them apart);
 * - 'broken-off': the connection closed before the file's last byte.
 */
export type DownloadFailureReason = 'not-found' | 'needs-login' | 'http-error' | 'unreachable' | 'broken-off';

/** The Error (of type Error) a failed download of {@link Lens.loadModel} with `from` rejects with. */
export interface DownloadError extends Error {
  readonly reason: DownloadFailureReason;
  /** The HTTP status of the answer (404, 401, 403, 500, …); undefined when no answer came. */
  readonly status?: number;
  /** The URL of the file (downloads over http(s)); undefined for a local folder, the cache or a folder without weights. */
  readonly url?: string;
}

/** A model kept in the cache (see {@link cachedModels}). */
export interface CachedModel {
  /** The hub name ('owner/name') for hub models, else the folder URL. */
  readonly from: string;
  /** The hub name, or null for other servers. */
  readonly name: string | null;
  /** The folder URL the files came from (with the revision for hub models). */
  readonly url: string;
  /** The hub revision, or null for other servers. */
  readonly revision: string | null;
  /** The files kept, e.g. ['config.json', 'tokenizer.json', 'model.safetensors']. */
  readonly files: readonly string[];
  /** Their total size. */
  readonly bytes: number;
  /** When the model was saved. */
  readonly savedAt: Date;
}

/** Options of {@link cachedModels} and {@link clearModelCache}. */
export interface ModelCacheOptions {
  /** The cache to look in: as loadModel's `cache` (a folder in Node, a Cache Storage name in browsers). */
  cache?: true | string;
}

export interface ModelInfo {
  /** The layout the model runs as: 'bert' for bert, distilbert, roberta, xlm-roberta and electra; 'llama' for llama, qwen2, mistral and gemma; 'bart' for the encoder-decoders bart and marian, 't5' for t5; 'gpt_neox', 'gpt_neo', 'opt' and 'phi' for their own. */
  readonly architecture: 'gpt2' | 'bert' | 'llama' | 'gpt_neox' | 'gpt_neo' | 'opt' | 'phi' | 'bart' | 't5';
  /** True for encoder-decoders (bart, marian, t5): run takes a source and a target, and layers counts the encoder's. */
  readonly encoderDecoder: boolean;
  /** An encoder-decoder's decoder layers (0 for the others). */
  readonly decoderLayers: number;
  /** The id an encoder-decoder's decoder starts from (config.decoder_start_token_id, Marian's pad), or null. */
  readonly decoderStartId: number | null;
  /** True for decoders (GPT-2, Llama): each token sees only itself and earlier ones; false for encoders (BERT). */
  readonly causal: boolean;
  /**
   * Each layer's sliding window: a query sees only the `windows[layer]` keys ending at its own
   * position (Mistral's every layer, GPT-Neo's local layers); 0 where a layer has none.
   */
  readonly windows: readonly number[];
  readonly layers: number;
  /** Query heads per layer. */
  readonly heads: number;
  /** Key/value heads per layer (fewer than heads with grouped-query attention). */
  readonly kvHeads: number;
  readonly dModel: number;
  readonly headWidth: number;
  readonly vocabSize: number;
  /** The most tokens a run takes (RoBERTa: max_position_embeddings - pad_token_id - 1, its numbering skips the rest). */
  readonly maxPositions: number;
  /** Weights loaded (a tied LM head counted once). */
  readonly parameters: number;
  /** The dtype most weights were stored in; they are computed in float32. */
  readonly dtype: 'F32' | 'F16' | 'BF16';
  /** How the matrices are held: '16-bit' when an F16/BF16 checkpoint was loaded with weightStorage 'as-stored' (or 'auto' needed it). */
  readonly weightStorage: 'float32' | '16-bit';
  /** Bytes the weights take in WebAssembly memory. */
  readonly weightBytes: number;
  /**
   * The model's language-model head: 'next-token' (decoders: logits at row t
   * predict token t + 1), 'masked' (BERT-family checkpoints that carry their
   * masked-LM head: logits at row t predict the token at t, e.g. a [MASK]),
   * or null (encoders saved without it: run() returns no logits).
   */
  readonly lmHead: 'next-token' | 'masked' | null;
  /** True when the LM head reuses the token embeddings (an encoder's masked-LM decoder too). */
  readonly tiedLmHead: boolean;
  /** The tokenizer's kind, or null when loaded without one. */
  readonly tokenizer: 'byte-level-bpe' | 'wordpiece' | 'word-level' | 'sentencepiece-bpe' | 'unigram' | 'marian' | null;
  /** Tensors in the files that the forward pass does not use (buffers, pooler, next-sentence and discriminator heads). */
  readonly ignoredTensors: readonly string[];
  /** Milliseconds loadModel took. */
  readonly loadMs: number;
  /** config.model_type. */
  readonly modelType: string;
}

export interface Tokenized {
  ids: Int32Array;
  /** Readable labels: "Ġcafé" is shown as " café". */
  tokens: string[];
  /** [start, end) of each token in the text, in UTF-16 code units; [0, 0] for added special tokens. */
  offsets: Array<[number, number]>;
}

/** Either text (needs a tokenizer) or token ids. */
export type ModelInput =
  | { text: string; ids?: undefined; keyMask?: Uint8Array }
  | { ids: Int32Array | number[]; text?: undefined; keyMask?: Uint8Array };

/** What {@link Model.run} returns besides attention and the hidden state. */
export interface ModelRunOptions {
  /**
   * Which rows of logits to compute: `'all'` (n x vocabSize), `'last'` (the last
   * position's row only, 1 x vocabSize: what predicting the next token needs;
   * the LM head is a vocabSize x dModel product per row, so this saves most of
   * it) or `'none'` / `false`. `'last'` gives exactly the last row of `'all'`.
   * Default `'all'`.
   */
  logits?: 'all' | 'last' | 'none' | false;
  /**
   * Which attention weights to return: `'all'` (the default), `'none'` (an empty array), or the
   * chosen `layers` and `heads` (each every one when absent; ascending, as in `attentionLayers`
   * and `attentionHeads`): `[chosen layer][chosen head][query][key]`. The same numbers as `'all'`;
   * any other head stays at hand through {@link ModelRun.headWeights}. `pool: f` (an integer from 1
   * to n, default 1) gives each head as ceil(n/f) x ceil(n/f) blocks instead, each the largest of its
   * f x f weights (the last blocks of a side hold the remaining n mod f tokens): what a view drawing
   * fewer pixels than tokens shows (a previous-token diagonal stays as bright as it is), in 1/f^2 of
   * the bytes; `attentionPool` says the factor. A pool outside 1 to n is a RangeError naming it.
   * `valueWeighted: true` returns those heads' value-weighted attention instead of their weights
   * (model.analyze's `valueWeighted`: ‖α_ij · v_j W_O^h‖, rows summing to 1; pooled, each block's
   * largest), computed after the forward from the queries, keys and values the model kept, a head
   * at a time: no second forward pass, no other head's n x n (`attentionQuantity` says which).
   * Anything but true or false is a TypeError naming it.
   */
  attention?: 'all' | 'none' | { layers?: number[]; heads?: number[]; pool?: number; valueWeighted?: boolean };
  /**
   * Preallocated arrays to fill instead of fresh ones, reused across runs of the
   * same length, as {@link AttentionInto}: attention (chosen) layers x heads x n x n,
   * hidden n x dModel, logits rows x vocabSize (rows from the `logits` option).
   */
  into?: { attention?: Float32Array | null; hidden?: Float32Array | null; logits?: Float32Array | null } | null;
}

export interface ModelRun {
  ids: Int32Array;
  tokens: string[];
  n: number;
  layers: number;
  heads: number;
  /** model.info.causal: whether the weights above the diagonal are zero by construction. */
  causal: boolean;
  /** model.info.windows: each layer's window (0: none); keys before a query's window have weight 0 by construction. */
  windows: readonly number[];
  /** A copy of the run's `keyMask` (0: a padding key, weight 0 from every query), or null without one. */
  keyMask: Uint8Array | null;
  /**
   * layers x heads x n x n: [layer][head][query][key] (the chosen ones with the attention option;
   * with its `pool` f, ceil(n/f) x ceil(n/f) blocks per head).
   */
  attention: Float32Array;
  /** The layers and the heads whose weights `attention` holds, ascending. */
  attentionLayers: number[];
  attentionHeads: number[];
  /** The attention option's pool factor: 1 (each head in full) or f (pooled into f x f blocks, each their largest weight). */
  attentionPool: number;
  /** What `attention` holds: the weights, or value-weighted attention (the attention option's `valueWeighted: true`). */
  attentionQuantity: 'weights' | 'valueWeighted';
  /**
   * Any head's n x n weights of this run, computed from the queries and keys the model kept: the
   * numbers `attention: 'all'` returns. With `{ pool: f }`, ceil(n/f) x ceil(n/f) blocks, each the
   * largest of its f x f weights (as the attention option's pool); one head's n x n is the most it
   * holds at a time. With `{ valueWeighted: true }`, the head's value-weighted attention instead
   * (from the kept values too), as the attention option's `valueWeighted`.
   * Valid until the model's next run, a causal model's analyze with logitLens false,
   * or dropCache: an Error after.
   */
  headWeights(layer: number, head: number, options?: { pool?: number; valueWeighted?: boolean }): Float32Array;
  /**
   * Several heads of one layer of this run in one call: `heads` (distinct indices, every head when
   * absent) in ascending order, [chosen head][query][key], each what headWeights(layer, head, options)
   * returns, bit for bit (and what `attention: { layers: [layer], heads, pool, valueWeighted }` would).
   * With `{ valueWeighted: true }` the layer's W_O is unpacked once for all its heads, where a call
   * per head unpacks it each time. Valid until the model's next run (or such an analyze, or dropCache,
   * as headWeights): an Error after.
   */
  layerWeights(layer: number, options?: { heads?: number[]; pool?: number; valueWeighted?: boolean }): Float32Array;
  /**
   * This run's logits computed afterwards from the last-layer rows the model kept: the last position's
   * (`'last'`, the default: 1 x vocabSize), every position's (`'all'`: n x vocabSize), or the chosen
   * positions' (`{ positions }`: positions.length x vocabSize, row i position positions[i]'s; any
   * integers from 0 to n - 1 in any order, repeats allowed), each row the very bits `run({ logits: 'all' })`
   * returns for its position, for decoders and masked-LM encoders alike. A page that draws the
   * attention first runs with `logits: 'none'`, draws, then predicts: the next token from `'last'`, a
   * masked-LM head's guesses from `{ positions: [the [MASK] positions] }` (the LM head costs a row
   * each, not n). Valid until the model's next run (or such an analyze, or dropCache, as headWeights):
   * an Error after; a RangeError for a
   * model without a language-model head, or for a position that is not an integer from 0 to n - 1; a
   * TypeError when positions is not a non-empty array.
   */
  computeLogits(which?: 'last' | 'all' | { positions: readonly number[] | Int32Array | Uint32Array }): Float32Array;
  /** n x dModel: the last hidden state (after the final norm for GPT-2 and Llama; before OPT-350m's project_out). */
  hidden: Float32Array;
  /**
   * (n - logitsFrom) x vocabSize for models with an LM head: every row with `logits: 'all'`
   * (the default), the last with `'last'`; null with `'none'` or for models without one (encoders
   * saved without their masked-LM head). For a masked-LM head, row t guesses the token at t.
   */
  logits: Float32Array | null;
  /** The position of logits' first row: 0 ('all'), n - 1 ('last'), or null when logits is null. */
  logitsFrom: number | null;
  /** Milliseconds spent in the WebAssembly forward pass. */
  elapsedMs: number;
  /**
   * Positions this run took from what a causal model kept of its last run (0: all computed; encoders
   * always 0): a run whose ids (and key mask) begin as the last run's recomputes from the first that differs.
   */
  reusedPositions: number;
  /** Bytes the model keeps of this run (O(layers x n x dModel): for the next run and headWeights). model.dropCache frees them. */
  cacheBytes: number;
}

/**
 * An encoder-decoder's source, and its target as text (after the decoder start id) or as the decoder's input ids.
 * A Marian tokenizer reads target text with target.spm (the source with source.spm).
 */
export type Seq2SeqInput =
  ({ text: string; ids?: undefined } | { ids: Int32Array | number[]; text?: undefined })
  & ({ target: string; targetIds?: undefined } | { targetIds: Int32Array | number[]; target?: undefined });

/**
 * An encoder-decoder's `attention` option of {@link Model.run}: `'all'` (the default), `'none'` (three
 * empty arrays), or the chosen `kinds` (every one when absent; a kind left out gets an empty array),
 * and of each the same `layers` (indices into each chosen kind's stack, below the shortest of them;
 * each kind's every layer when absent) and `heads`, each head pooled by `pool` (1 to max(n, m)) into
 * ceil(rows/f) x ceil(keys/f) blocks, each the largest of its f x f weights. The same numbers as
 * `'all'`, and the same logits whatever is chosen; any other head stays at hand through
 * {@link Seq2SeqRun.headWeights}. A bad kind, layer, head or pool is an Error naming it, and so is
 * `valueWeighted` (model.analyze gives each kind's value-weighted attention).
 */
export type Seq2SeqAttentionChoice = 'all' | 'none' | { kinds?: AttentionKind[]; layers?: number[]; heads?: number[]; pool?: number };

/** What {@link Model.run} returns for an encoder-decoder (info.encoderDecoder). */
export interface Seq2SeqRun {
  /** The source's ids and tokens (n of them). */
  ids: Int32Array;
  tokens: string[];
  n: number;
  /** The decoder's input ids and tokens (m of them, the decoder start first when `target` was text). */
  targetIds: Int32Array;
  targetTokens: string[];
  m: number;
  /** Encoder layers. */
  layers: number;
  decoderLayers: number;
  heads: number;
  /** false: the encoder's attention is bidirectional (the decoder's is causal). */
  causal: false;
  /** The encoder's self-attention, layers x heads x n x n: [layer][head][query][key]. */
  attention: Float32Array;
  /** The decoder's causal self-attention, decoderLayers x heads x m x m. */
  decoderAttention: Float32Array;
  /** Cross-attention, decoderLayers x heads x m x n: [layer][head][target position][source position]; rows sum to 1. */
  crossAttention: Float32Array;
  /** The kinds whose weights the arrays above hold (the attention option's), in the order encoder, decoder, cross. */
  attentionKinds: AttentionKind[];
  /** Each kind's layers the arrays hold, ascending (empty for a kind not returned). */
  attentionLayers: { encoder: number[]; decoder: number[]; cross: number[] };
  /** The heads the arrays hold, ascending. */
  attentionHeads: number[];
  /** The attention option's pool factor: 1 (each head in full) or f (f x f blocks, each their largest weight). */
  attentionPool: number;
  /**
   * Any head of any kind of this run (n x n, m x m or m x n; pooled with `{ pool }`), computed from the
   * queries and keys the model kept: the numbers `attention: 'all'` returns. Valid until the model's next
   * run, generate or analyze (or dropCache): an Error after.
   */
  headWeights(kind: AttentionKind, layer: number, head: number, options?: { pool?: number }): Float32Array;
  /** m x vocabSize, final_logits_bias included: row i predicts the token after target i. */
  logits: Float32Array;
  logitsFrom: 0;
  elapsedMs: number;
  /** Bytes the model keeps of this run for headWeights (the session's caches and every layer's queries); dropCache frees them. */
  cacheBytes: number;
}

/** A token as {@link Model.generate} chooses it. */
export interface GeneratedToken {
  id: number;
  token: string;
  /** 0 for the first generated token. */
  index: number;
  /** Encoder-decoders: the step's cross-attention, decoderLayers x heads x n, [layer][head][source position]. */
  crossAttention?: Float32Array;
}

/** What {@link Model.generate} returns: the generated tokens only (not the prompt, not the decoder start id). */
export interface Generation {
  ids: Int32Array;
  tokens: string[];
  /** The generated ids decoded, or null without a tokenizer. */
  text: string | null;
  /** Encoder-decoders: the source's ids and tokens. */
  sourceIds?: Int32Array;
  sourceTokens?: string[];
  /**
   * Encoder-decoders: decoderLayers x heads x k x n, [layer][head][generated token][source position], the
   * cross-attention of the decoder step that chose each of the k tokens (what run gives with those steps' inputs).
   */
  crossAttention?: Float32Array;
  /** Decoder-only models: the prompt's ids and tokens. */
  promptIds?: Int32Array;
  promptTokens?: string[];
  elapsedMs: number;
}

/** One layer's every step (Explanation), for a model. */
export interface ModelExplanation extends Explanation {
  /** The text's ids; an encoder-decoder's: the source's. */
  ids: Int32Array;
  layer: number;
  /** The head asked for (every head's numbers are there; views pick this one). */
  head: number;
  /** n x dModel: the residual stream after this whole layer (an encoder-decoder's: that encoder or decoder layer). */
  layerOutput: Float32Array;
  /**
   * An encoder-decoder's kind of attention: the encoder's self-attention, the decoder's causal
   * self-attention, or cross-attention (Q from the decoder's target rows, K and V from the encoder's
   * output: n = m target tokens, nContext = the source's). Null for a model with one stack.
   */
  kind: AttentionKind | null;
  /** An encoder-decoder's decoder inputs (targetIds, or target with the start id), or null (the encoder kind without a target). */
  targetIds?: Int32Array | null;
}

/** An encoder-decoder's three kinds of attention. */
export type AttentionKind = 'encoder' | 'decoder' | 'cross';

/**
 * What {@link Model.analyze} returns for an encoder-decoder: the encoder's in the one-stack fields, the decoder's and
 * cross-attention's beside (and never a kept run's methods: it keeps none).
 */
export interface Seq2SeqAnalysis extends Omit<ModelAnalysis, 'headWeights' | 'layerWeights' | 'computeLogits'> {
  encoderDecoder: true;
  /** The decoder's inputs (m of them). */
  targetIds: Int32Array;
  targetTokens: string[];
  m: number;
  decoderLayers: number;
  /** The decoder self-attention's detectors over the target's ids, decoderLayers x heads each. */
  decoderScores: HeadScores;
  /** The decoder self-attention's rollout, decoderLayers x m x m. (Cross-attention has none: its m x n maps do not chain along one stream.) */
  decoderRollout: Float32Array;
  /** decoderLayers x heads x m x m, rows summing to 1; null with `valueWeighted: false`. */
  decoderValueWeighted: Float32Array | null;
  /** Cross-attention's, decoderLayers x heads x m x n ([layer][head][target][source]), rows summing to 1; null with `valueWeighted: false`. */
  crossValueWeighted: Float32Array | null;
  /** The decoder's logit lens: decoderLayers x P x topK over target positions (the decoder stream through its final norm and the LM head). */
  logitLens: { ids: Int32Array; probs: Float32Array; positions: Int32Array } | null;
}

/**
 * Head detector scores, TransformerLens' detect_head "mul" measure with its
 * defaults: sum(A o P) / sum(A) for a head's weights A and a 0/1 pattern P,
 * every row in the denominator. Each array is layers x heads, [layer * heads + head].
 * (A type rather than an interface, so it passes where named scores are expected: attnlens/views' headScores.)
 */
export type HeadScores = {
  /** Key i - 1. */
  previousToken: Float32Array;
  /** Key 0, for queries i >= 1 (the attention sink). */
  firstToken: Float32Array;
  /** Key i. */
  currentToken: Float32Array;
  /** Earlier keys with the query's token id (0 when the text repeats no token). */
  duplicateToken: Float32Array;
  /** The key after each earlier occurrence of the query's token (0 when the text repeats no token). */
  induction: Float32Array;
};

/** What {@link Model.analyze} returns. */
export interface ModelAnalysis {
  ids: Int32Array;
  tokens: string[];
  n: number;
  layers: number;
  heads: number;
  scores: HeadScores;
  /**
   * Attention rollout, layers x n x n, [layer][query][key]: with
   * Ã_l = 0.5 * mean of layer l's heads + 0.5 * I, rollout_0 = Ã_0 and
   * rollout_l = Ã_l · rollout_(l-1). Rows sum to 1.
   */
  rollout: Float32Array;
  /**
   * Value-weighted attention (Kobayashi et al., 2020), layers x heads x n x n,
   * [layer][head][query][key]: ‖α_ij · v_j W_O^h‖, with v_j key j's value vector
   * of the head's kv group (bias included) and W_O^h the head's rows of the
   * output projection, each row normalised to sum to 1. Null when asked for
   * with `valueWeighted: false`.
   */
  valueWeighted: Float32Array | null;
  /**
   * The logit lens (nostalgebraist, 2020): the residual stream after each layer
   * through the model's final norm and LM head (after the last layer: the
   * model's own logits), the topK most probable tokens of each position,
   * layers x P x topK, [layer][i][rank] for position positions[i], most
   * probable first, with their softmax probabilities over the whole
   * vocabulary. P = n and positions 0 ... n - 1, unless analyze was given
   * `logitLens: { positions }` (those positions, in that order). Null for models
   * without an LM head (encoders saved without their masked-LM head), or when asked for with `logitLens: false`.
   */
  logitLens: { ids: Int32Array; probs: Float32Array; positions: Int32Array } | null;
  /**
   * Present (not enumerable) when the analysis went through what the model kept, as a causal model's with
   * `logitLens: false` does: the model then keeps this analysis's run, and these read it as a run's result's
   * do ({@link ModelRun.headWeights}, {@link ModelRun.layerWeights}, {@link ModelRun.computeLogits}), each the
   * bits the same call on a fresh run of these ids gives. Valid until the model's next run, another such
   * analysis or dropCache: an Error after (`model.analyze result headWeights: this run's queries and keys are
   * gone …`). Absent for an analysis with the lens, an encoder's and an encoder-decoder's.
   */
  headWeights?: ModelRun['headWeights'];
  layerWeights?: ModelRun['layerWeights'];
  computeLogits?: ModelRun['computeLogits'];
}

export interface Model {
  readonly info: ModelInfo;
  readonly disposed: boolean;
  tokenize(text: string): Tokenized;
  /**
   * A forward pass (see ModelRun). A RangeError when its buffers would not fit the WebAssembly memory, counting
   * the growth of what the model keeps; when they would fit only without the kept cache, it is dropped first
   * (as dropCache: the run computes every position).
   */
  run(input: ModelInput & ModelRunOptions): ModelRun;
  /** An encoder-decoder's forward pass over a source and a target (info.encoderDecoder); `attention`: what it returns. */
  run(input: Seq2SeqInput & { attention?: Seq2SeqAttentionChoice }): Seq2SeqRun;
  /**
   * Greedy decoding: the most probable token each step (the first on a tie), up to `maxTokens` (1 to maxPositions,
   * less the prompt for decoder-only models), stopping after config.eos_token_id as transformers' generate does,
   * and never completing a sequence of config.bad_words_ids (opus-mt bars its pad token)
   * (no forced tokens, no beams, no repetition penalties). Encoder-decoders decode from decoderStartId, each step
   * reusing the cached keys and values of the steps before; decoder-only models run the prompt and what they
   * generated once per token. `onToken` sees each token as it is chosen.
   */
  generate(input: ({ text: string; ids?: undefined } | { ids: Int32Array | number[]; text?: undefined })
    & { maxTokens: number; onToken?: (token: GeneratedToken) => void }): Generation;
  /**
   * Layer `layer`'s attention step by step: x is the normalized input the layer attends
   * from, q and k are after biases and rotary embeddings, wq/wk/wv are [in, out]
   * (grouped-query keys and values repeated for each query head of their group).
   */
  explain(input: ModelInput & { layer?: number; head?: number }): ModelExplanation;
  /**
   * An encoder-decoder's attention of one `kind` step by step: 'encoder' (layer 0 to layers - 1; the
   * target may be left out), 'decoder' or 'cross' (layer 0 to decoderLayers - 1; the target is needed).
   */
  explain(input: ({ text: string; ids?: undefined } | { ids: Int32Array | number[]; text?: undefined })
    & ({ target?: string; targetIds?: undefined } | { targetIds?: Int32Array | number[]; target?: undefined })
    & { kind: AttentionKind; layer?: number; head?: number }): ModelExplanation;
  /**
   * Head detector scores, attention rollout, value-weighted attention and the
   * logit lens of one forward pass (README: "What each head does"). `topK`: the
   * tokens the logit lens keeps per position and layer, 1 to vocabSize (default 5, or vocabSize when smaller).
   * `valueWeighted: false` / `logitLens: false` leave those measures out (the lens costs an LM-head
   * product per layer and position); both default to true. `logitLens: { positions }` computes the
   * lens of those positions only (0 to n - 1, any order), e.g. `{ positions: [n - 1] }` for the next token.
   * With `logitLens: false`, a causal model's forward goes through what it kept of its last run, as a
   * run's does: ids that begin as the kept run's recompute only the positions after them (the same bits
   * as a fresh forward; value-weighted attention from the kept values afterwards, the same bits too),
   * and like a run it replaces what is kept, so the last ModelRun's headWeights, layerWeights and
   * computeLogits throw afterwards, and the analysis's result has them instead (ModelAnalysis.headWeights). An analysis with the lens (and an encoder's) computes every position
   * and leaves what the model keeps as it is.
   */
  analyze(input: ({ text: string; ids?: undefined } | { ids: Int32Array | number[]; text?: undefined })
    & { topK?: number; valueWeighted?: boolean; logitLens?: boolean | { positions: number[] | Int32Array } }): ModelAnalysis;
  /** An encoder-decoder's analyses of every kind over a source and a target (lens positions are the target's). */
  analyze(input: Seq2SeqInput
    & { topK?: number; valueWeighted?: boolean; logitLens?: boolean | { positions: number[] | Int32Array } }): Seq2SeqAnalysis;
  /**
   * Each head's induction score (layers x heads, [layer * heads + head]) on `length`
   * seeded random token ids (mulberry32 from `seed`, special tokens redrawn) repeated
   * twice: the second copy's attention to the token after each earlier occurrence.
   * `length` from 1 to maxPositions / 2 (default 50), `seed` from 0 to 2^32 - 1 (default 1).
   */
  inductionScores(options?: { length?: number; seed?: number }): Float32Array;
  /** Token ids back to text. */
  /** Text from ids; special tokens (`<s>`, `[SEP]`) are kept unless `skipSpecialTokens`. */
  decode(ids: ArrayLike<number>, options?: { skipSpecialTokens?: boolean }): string;
  /** A readable label for one token id (" café" for GPT-2's "Ġcafé"); the id itself without a tokenizer. */
  tokenText(id: number): string;
  /**
   * Frees what the model keeps of its last run (ModelRun.cacheBytes, or an encoder-decoder's Seq2SeqRun.cacheBytes):
   * the next run computes every position, headWeights of earlier runs throw.
   */
  dropCache(): void;
  /** Frees the model's WebAssembly memory; later calls throw. */
  dispose(): void;
}

/**
 * Loads the WebAssembly module and resolves to the API. Each variant is
 * instantiated once; later calls resolve to the same object.
 *
 * @example
 * const lens = await load();
 * const { weights } = lens.attention({ q, k, v, m: 2, n: 3, dk: 4, dv: 4 });
 */
export function load(options?: LoadOptions): Promise<Lens>;

/** Options of configure(). */
export interface ConfigureOptions {
  /**
   * The folder where the package's module files (web/lib/wasm/: `.mjs`, `.wasm`, `.worker.js`)
   * are served. In browsers a URL, absolute or relative to the page (`document.baseURI`); a
   * trailing `/` is added if missing. In Node a folder path (relative to the working directory)
   * or a `file:` URL; http(s) URLs are a TypeError. `undefined`: beside the package's own modules.
   */
  wasmPath?: string;
}

/**
 * Tells load() (and the custom elements, which call it) where the module files are, as
 * onnxruntime-web's `env.wasm.wasmPaths` does. Call it before the first load(): once a load
 * has started, a different setting throws an Error (the same one again is a no-op).
 * Unknown keys or a wasmPath that is not a non-empty string throw a TypeError.
 *
 * @example
 * configure({ wasmPath: '/assets/attnlens/' });
 * const lens = await load();
 */
export function configure(options: ConfigureOptions): void;

/**
 * The models loadModel({ from }) kept in the cache, sorted by URL. Needs no load().
 *
 * @example
 * for (const model of await cachedModels()) console.log(model.from, model.revision, model.bytes);
 */
export function cachedModels(options?: ModelCacheOptions): Promise<CachedModel[]>;

/**
 * Empties the model cache, or removes the models `from` names: a hub name removes every revision
 * of it, a hub URL with a revision (…/resolve/v1/) that one, another server's folder URL that
 * folder. Resolves to the number of models removed. Needs no load().
 *
 * @example
 * await clearModelCache('openai-community/gpt2');
 */
export function clearModelCache(from?: string, options?: ModelCacheOptions): Promise<number>;

/** True when this engine supports WebAssembly SIMD (what load() uses to choose). */
export function simdSupported(): boolean;

/** True when this engine validates relaxed SIMD (`f32x4.relaxed_madd`). */
export function relaxedSimdSupported(): boolean;

/** The level load() picks by default: 'relaxed', else 'simd', else 'scalar'. */
export function bestSimdLevel(): SimdLevel;

/** The package version. */
export const version: string;
