/**
 * The image's runtime stage without Docker: the Dockerfile's last stage read (WORKDIR, ENV,
 * `COPY --from=<build stage>`, ENTRYPOINT, CMD), and its files laid out in a directory from
 * the built tree, as the COPY lines say. Tests then start the processes from there, so a
 * file the processes need but the image lacks fails them (test/integration/runtime-image.test.ts).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';

export interface StageCopy {
  /** Absolute path in the build stage (`/src/dist/cmd`). */
  src: string;
  /** As written: relative to the runtime WORKDIR, or absolute. */
  dest: string;
}

export interface RuntimeStage {
  /** The build stage's WORKDIR: its files are the build tree (the repository after `npm run build`). */
  buildWorkdir: string;
  workdir: string;
  env: Record<string, string>;
  copies: StageCopy[];
  entrypoint: string[];
  cmd: string[];
}

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** Instructions with their continuation lines joined; comments and blank lines dropped. */
function instructions(dockerfile: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = dockerfile.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let text = lines[i] ?? '';
    if (/^\s*(#|$)/.test(text)) continue;
    while (text.endsWith('\\') && i + 1 < lines.length) {
      i++;
      const next = lines[i] ?? '';
      if (/^\s*#/.test(next)) continue;
      text = text.slice(0, -1) + ' ' + next.trim();
    }
    const match = /^\s*(\w+)\s+(.*)$/.exec(text);
    if (match === null) throw new Error(`Dockerfile line ${start + 1}: not an instruction: ${text}`);
    out.push({ keyword: (match[1] as string).toUpperCase(), args: (match[2] as string).trim(), line: start + 1 });
  }
  return out;
}

function execForm(instruction: Instruction): string[] {
  const parsed: unknown = JSON.parse(instruction.args);
  if (!Array.isArray(parsed) || !parsed.every((part): part is string => typeof part === 'string')) {
    throw new Error(`Dockerfile line ${instruction.line}: ${instruction.keyword} must be in exec form (a JSON array of strings)`);
  }
  return parsed;
}

/**
 * The last stage of a Dockerfile, whose files come from an earlier stage through
 * `COPY --from=<stage>`. Any other way of getting files into it (COPY from the context, ADD)
 * is refused: the layout below would not know it.
 */
export function parseRuntimeStage(dockerfile: string): RuntimeStage {
  const all = instructions(dockerfile);
  const froms = all.map((ins, at) => ({ ins, at })).filter(({ ins }) => ins.keyword === 'FROM');
  const last = froms.at(-1);
  if (last === undefined || froms.length < 2) throw new Error('the Dockerfile has no build stage and runtime stage');
  const stageNames = new Map<string, number>();
  froms.forEach(({ ins, at }) => {
    const name = /\bAS\s+(\S+)\s*$/i.exec(ins.args)?.[1];
    if (name !== undefined) stageNames.set(name, at);
  });
  const stage: RuntimeStage = { buildWorkdir: '', workdir: '/', env: {}, copies: [], entrypoint: [], cmd: [] };
  let from: string | null = null;
  for (const ins of all.slice(last.at + 1)) {
    switch (ins.keyword) {
      case 'WORKDIR':
        stage.workdir = posix.resolve(stage.workdir, ins.args);
        break;
      case 'ENV': {
        for (const pair of ins.args.split(/\s+/)) {
          const eq = pair.indexOf('=');
          if (eq <= 0) throw new Error(`Dockerfile line ${ins.line}: ENV must be KEY=VALUE`);
          stage.env[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
        break;
      }
      case 'COPY': {
        const parts = ins.args.split(/\s+/);
        const flag = parts[0] ?? '';
        if (!flag.startsWith('--from=') || parts.length !== 3) {
          throw new Error(`Dockerfile line ${ins.line}: the runtime stage may only COPY --from=<stage> <src> <dest> (got COPY ${ins.args})`);
        }
        const stageName = flag.slice('--from='.length);
        if (from !== null && from !== stageName) throw new Error(`Dockerfile line ${ins.line}: files from two stages (${from}, ${stageName})`);
        from = stageName;
        stage.copies.push({ src: parts[1] as string, dest: parts[2] as string });
        break;
      }
      case 'ADD':
        throw new Error(`Dockerfile line ${ins.line}: ADD in the runtime stage`);
      case 'ENTRYPOINT':
        stage.entrypoint = execForm(ins);
        break;
      case 'CMD':
        stage.cmd = execForm(ins);
        break;
      default:
        // RUN (the user, /data), USER, EXPOSE: nothing the processes read from the file set.
        break;
    }
  }
  if (from === null) throw new Error('the runtime stage copies nothing from the build stage');
  const buildAt = stageNames.get(from);
  if (buildAt === undefined) throw new Error(`COPY --from=${from}: no stage of that name`);
  const buildEnd = froms.find(({ at }) => at > buildAt)?.at ?? all.length;
  const buildWorkdir = all
    .slice(buildAt + 1, buildEnd)
    .filter((ins) => ins.keyword === 'WORKDIR')
    .at(-1)?.args;
  if (buildWorkdir === undefined) throw new Error(`stage ${from} has no WORKDIR`);
  stage.buildWorkdir = buildWorkdir;
  return stage;
}

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
}

/**
 * The build tree's `node_modules` as `npm prune --omit=dev` leaves it: a directory holding a
 * symlink to each package package-lock.json does not mark `dev` (hundreds of megabytes are
 * not copied). A file of dist/ that imports a dev-only package then fails here as in the image.
 * Packages resolve their own dependencies from their real place, where dev packages remain;
 * that only matters if the lock itself were wrong.
 */
function productionNodeModules(buildTree: string, from: string, to: string): void {
  const lock = JSON.parse(readFileSync(join(buildTree, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  mkdirSync(to, { recursive: true });
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (!key.startsWith('node_modules/') || entry.dev === true) continue;
    const name = key.slice('node_modules/'.length);
    // Nested copies live inside their parent package, which comes whole.
    if (name.includes('/node_modules/')) continue;
    const real = join(from, name);
    if (!existsSync(real)) {
      if (entry.optional === true) continue;
      throw new Error(`${key} is in package-lock.json but not installed: run npm ci`);
    }
    mkdirSync(dirname(join(to, name)), { recursive: true });
    symlinkSync(realpathSync(real), join(to, name), 'dir');
  }
}

/**
 * Lays out the runtime stage's files under `root` (the image's `/`), taking each COPY's
 * source from `buildTree` (what the build stage's WORKDIR holds after its build, which prunes
 * the dev dependencies). Returns the directory that is the stage's WORKDIR. Files are copied;
 * `node_modules` is productionNodeModules. Symlinking dist/ would not do: Node resolves a
 * module through its real path, so dist/ files would find their neighbours in the build tree
 * (a file the image lacks included) instead of in the layout.
 */
export function layOutRuntimeStage(stage: RuntimeStage, buildTree: string, root: string): string {
  const workdir = join(root, stage.workdir);
  mkdirSync(workdir, { recursive: true });
  for (const { src, dest } of stage.copies) {
    const rel = posix.relative(stage.buildWorkdir, src);
    if (rel.startsWith('..') || posix.isAbsolute(rel)) throw new Error(`COPY source ${src} is outside the build stage's WORKDIR ${stage.buildWorkdir}`);
    const from = join(buildTree, rel);
    if (!existsSync(from)) throw new Error(`COPY --from source ${src} does not exist in the built tree (${from}): run npm run build`);
    const base = posix.isAbsolute(dest) ? join(root, dest) : join(workdir, dest);
    const to = dest.endsWith('/') ? join(base, basename(from)) : base;
    mkdirSync(dirname(to), { recursive: true });
    if (rel === 'node_modules') productionNodeModules(buildTree, from, to);
    else cpSync(from, to, { recursive: true, dereference: true });
  }
  return workdir;
}
