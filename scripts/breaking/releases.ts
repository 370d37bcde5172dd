/**
 * @module Released contracts and the changelog, for `pnpm check:breaking`: which file of contract-releases/
 * is the last release (`openapi-X.Y.Z.json`, highest version), and whether CHANGELOG.md declares a new
 * major over it (a `## [X.Y.Z]` heading with a greater major), which is what lets a breaking change pass.
 * Pure functions over names and text; the script does the reading.
 */

export interface Version {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

/** `X.Y.Z` (digits only, no pre-release or build part), or undefined. */
export function parseVersion(text: string): Version | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(text.trim());
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), text: text.trim() };
}

export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** The released contract with the highest version among file names `openapi-X.Y.Z.json`; other names are ignored. */
export function latestRelease(fileNames: string[]): { file: string; version: Version } | undefined {
  const releases = fileNames.flatMap((file) => {
    const version = parseVersion(/^openapi-(.+)\.json$/.exec(file)?.[1] ?? '');
    return version ? [{ file, version }] : [];
  });
  return releases.sort((a, b) => compareVersions(b.version, a.version))[0];
}

/** The versions of the changelog's `## [X.Y.Z]` headings (a date or link may follow); `## [Unreleased]` is not one. */
export function changelogVersions(changelog: string): Version[] {
  return [...changelog.matchAll(/^##\s+\[([^\]]+)\]/gm)].flatMap((match) => {
    const version = parseVersion(match[1]!);
    return version ? [version] : [];
  });
}

/** The highest changelog version whose major is greater than `released`'s, or undefined: a new major is declared. */
export function declaredMajor(changelog: string, released: Version): Version | undefined {
  return changelogVersions(changelog)
    .filter((version) => version.major > released.major)
    .sort((a, b) => compareVersions(b, a))[0];
}
