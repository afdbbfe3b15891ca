/**
 * What the guest project's package.json and README.md give the manifest: version, description,
 * homepage, repository, readme, and from the "berm" member usage and deps. Problems are reported
 * with the place in package.json they concern, found in its text.
 */

import type { Deps, ManifestData } from '@berm/manifest';

/** The members of the manifest a project gives, and the name its image is written under. */
export interface Project extends Pick<ManifestData, 'version' | 'description' | 'homepage' | 'repository' | 'readme' | 'usage'> {
  /** The harness's default name: package.json's name without its scope. */
  name: string;
  deps: Deps;
}

/** A problem in package.json, at a character offset of its text. */
export interface ProjectProblem {
  message: string;
  offset: number;
}

export const PACKAGE_JSON = 'package.json';

/** The character offset of the member `path` (keys from the root) in package.json's text, as near as a scan finds it; 0 when not found. */
export function offsetOf(text: string, path: readonly string[]): number {
  let at = 0;
  let found = 0;
  for (const key of path) {
    const i = text.indexOf(JSON.stringify(key), at);
    if (i < 0) return found;
    found = i;
    at = i + 1;
  }
  return found;
}

function stringMember(
  value: Record<string, unknown>,
  key: string,
  text: string,
  problems: ProjectProblem[],
  prefix: string[] = [],
): string {
  const v = value[key];
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  problems.push({ message: `${[...prefix, key].join('.')} must be a string`, offset: offsetOf(text, [...prefix, key]) });
  return '';
}

function stringList(v: unknown, where: string[], text: string, problems: ProjectProblem[]): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  problems.push({ message: `${where.join('.')} must be a list of strings`, offset: offsetOf(text, where) });
  return [];
}

/** Reads package.json (`packageText`, null when the file is missing) and README.md (null when missing). */
export function readProject(packageText: string | null, readmeText: string | null, problems: ProjectProblem[]): Project {
  const project: Project = {
    name: '',
    version: '',
    description: '',
    homepage: '',
    repository: '',
    readme: readmeText ?? '',
    usage: '',
    deps: { programs: [], syscalls: {}, secrets: [] },
  };
  if (packageText === null) return project;
  let pkg: unknown;
  try {
    pkg = JSON.parse(packageText);
  } catch (e) {
    const at = /position (\d+)/.exec((e as Error).message);
    problems.push({ message: `package.json is not valid JSON: ${(e as Error).message}`, offset: at ? Number(at[1]) : 0 });
    return project;
  }
  if (pkg === null || typeof pkg !== 'object' || Array.isArray(pkg)) {
    problems.push({ message: 'package.json must hold an object', offset: 0 });
    return project;
  }
  const p = pkg as Record<string, unknown>;
  project.name = stringMember(p, 'name', packageText, problems).replace(/^@[^/]*\//, '');
  project.version = stringMember(p, 'version', packageText, problems);
  project.description = stringMember(p, 'description', packageText, problems);
  project.homepage = stringMember(p, 'homepage', packageText, problems);
  const repository = p.repository;
  if (typeof repository === 'object' && repository !== null && !Array.isArray(repository)) {
    project.repository = stringMember(repository as Record<string, unknown>, 'url', packageText, problems, ['repository']);
  } else {
    project.repository = stringMember(p, 'repository', packageText, problems);
  }
  const berm = p.berm;
  if (berm === undefined || berm === null) return project;
  if (typeof berm !== 'object' || Array.isArray(berm)) {
    problems.push({
      message: 'package.json\'s "berm" member must be an object: {"usage": string, "deps": {...}}',
      offset: offsetOf(packageText, ['berm']),
    });
    return project;
  }
  const b = berm as Record<string, unknown>;
  project.usage = stringMember(b, 'usage', packageText, problems, ['berm']);
  const deps = b.deps;
  if (deps === undefined || deps === null) return project;
  if (typeof deps !== 'object' || Array.isArray(deps)) {
    problems.push({
      message: 'berm.deps must be an object: {"programs": [...], "syscalls": {...}, "secrets": [...]}',
      offset: offsetOf(packageText, ['berm', 'deps']),
    });
    return project;
  }
  const d = deps as Record<string, unknown>;
  project.deps.programs = stringList(d.programs, ['berm', 'deps', 'programs'], packageText, problems);
  project.deps.secrets = stringList(d.secrets, ['berm', 'deps', 'secrets'], packageText, problems);
  const syscalls = d.syscalls;
  if (syscalls !== undefined && syscalls !== null) {
    if (typeof syscalls !== 'object' || Array.isArray(syscalls)) {
      problems.push({
        message: 'berm.deps.syscalls must be an object of syscall name to the list of what it reaches',
        offset: offsetOf(packageText, ['berm', 'deps', 'syscalls']),
      });
    } else {
      for (const [name, reach] of Object.entries(syscalls)) {
        project.deps.syscalls[name] = stringList(reach, ['berm', 'deps', 'syscalls', name], packageText, problems);
      }
    }
  }
  for (const key of Object.keys(d)) {
    if (!['programs', 'syscalls', 'secrets'].includes(key)) {
      problems.push({
        message: `berm.deps has no member "${key}": it takes programs, syscalls and secrets`,
        offset: offsetOf(packageText, ['berm', 'deps', key]),
      });
    }
  }
  return project;
}
