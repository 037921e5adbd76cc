// Builds the libFuzzer targets with clang (AddressSanitizer + UBSan) in
// build/fuzz and runs them one after the other, splitting a bounded time
// between them: attnlens_fuzz (attention, multi-head, sentence pipeline)
// and attnlens_fuzz_model (safetensors headers and tables, and model forward
// passes, seeded from tests/fuzz/seeds/model with tests/fuzz/model.dict),
// then tests/fuzz/fuzz-safetensors-header.mjs (the header as JavaScript reads it) and
// tests/fuzz/fuzz-pytorch-bin.mjs (pytorch_model.bin as JavaScript reads it).
// Exits non-zero on a crash, a sanitizer report or a failed check; the
// input that did it is saved in build/fuzz/artifacts/.
//   node tests/fuzz/run.mjs [seconds]      (default 30 in all, or $ATTNLENS_FUZZ_SECONDS)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const buildDir = join(repoRoot, 'build', 'fuzz');
const seconds = Number(process.argv[2] ?? process.env.ATTNLENS_FUZZ_SECONDS ?? 30);

function run(command, args, options = {}) {
  console.log(`$ ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: repoRoot, stdio: 'inherit', ...options });
  if (result.error) {
    console.error(`[fuzz] could not run ${command}: ${result.error.message}`);
    process.exit(1);
  }
  return result.status;
}

if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error(`[fuzz] the time limit must be a positive number of seconds, got ${process.argv[2] ?? process.env.ATTNLENS_FUZZ_SECONDS}`);
  process.exit(2);
}
if (spawnSync('clang++', ['--version']).status !== 0 || !existsSync('/usr/lib/llvm-14/lib/clang')) {
  console.error('[fuzz] clang++ with libFuzzer is missing: apt-get install -y clang libclang-rt-14-dev');
  process.exit(1);
}

if (!existsSync(join(buildDir, 'build.ninja'))) {
  const status = run('cmake', ['-S', '.', '-B', buildDir, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=RelWithDebInfo',
    '-DCMAKE_CXX_COMPILER=clang++', '-DATTNLENS_FUZZ=ON']);
  if (status !== 0) process.exit(status);
}
const built = run('ninja', ['-C', buildDir, 'attnlens_fuzz', 'attnlens_fuzz_model']);
if (built !== 0) process.exit(built);

// Each target gets its share of the time; the corpora persist between runs,
// so each run starts where the last ended.
const fuzzDir = join(repoRoot, 'tests', 'fuzz');
const targets = [
  { name: 'attnlens_fuzz', corpus: 'corpus', share: 0.5, extra: [] },
  { name: 'attnlens_fuzz_model', corpus: 'corpus-model', share: 0.5,
    extra: [`-dict=${join(fuzzDir, 'model.dict')}`], seeds: join(fuzzDir, 'seeds', 'model') },
];
const artifacts = join(buildDir, 'artifacts');
mkdirSync(artifacts, { recursive: true });
for (const target of targets) {
  const corpus = join(buildDir, target.corpus);
  mkdirSync(corpus, { recursive: true });
  const targetSeconds = Math.max(1, Math.round(seconds * target.share));
  // New inputs go to the first directory (the corpus); the seeds are only read.
  const status = run(join(buildDir, target.name), [
    `-max_total_time=${targetSeconds}`, '-max_len=4096', '-timeout=10', '-rss_limit_mb=2048', '-print_final_stats=1',
    `-artifact_prefix=${artifacts}/`, ...target.extra, corpus, ...(target.seeds ? [target.seeds] : []),
  ], { env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' } });
  if (status !== 0) {
    console.error(`[fuzz] ${target.name} failed (exit ${status}); reproduce with: ${join(buildDir, target.name)} ${artifacts}/<crash-file>`);
    process.exit(status || 1);
  }
}
// The safetensors header as JavaScript reads it (JSON.parse, then the
// module's table check), which libFuzzer cannot reach: a fifth more time.
const headerFuzzer = join(fuzzDir, 'fuzz-safetensors-header.mjs');
if (existsSync(join(repoRoot, 'web', 'lib', 'wasm', 'attnlens-simd.wasm'))) {
  const status = run(process.execPath, [headerFuzzer, String(Math.max(2, Math.round(seconds / 5)))]);
  if (status !== 0) process.exit(status || 1);
} else {
  console.log(`[fuzz] ${headerFuzzer} skipped: build the WebAssembly module first (node web/scripts/build.mjs wasm)`);
}
// pytorch_model.bin's zip archive and restricted pickle reader (JavaScript only): as long again.
const binStatus = run(process.execPath, [join(fuzzDir, 'fuzz-pytorch-bin.mjs'), String(Math.max(2, Math.round(seconds / 5)))]);
if (binStatus !== 0) process.exit(binStatus || 1);
console.log(`[fuzz] no crash in ${seconds} s`);
