import { installedVersion, peerVersionWarnings } from './peer-versions';

describe(peerVersionWarnings.name, () => {
  const versions =
    (map: Record<string, string>) =>
    (name: string): string | undefined =>
      map[name];

  // claim: C-4
  it('warns about @nestjs/typeorm 12 beside Nest 11, with the command that fixes it', () => {
    const [warning, ...rest] = peerVersionWarnings(
      versions({ '@nestjs/core': '11.2.10', '@nestjs/typeorm': '12.0.2' }),
    );
    expect(rest).toEqual([]);
    expect(warning).toContain('@nestjs/typeorm 12.x is installed beside Nest 11');
    expect(warning).toContain('npm i @nestjs/typeorm@11');
  });

  it('is quiet when the majors match, or a peer is not installed', () => {
    expect(
      peerVersionWarnings(
        versions({
          '@nestjs/core': '12.5.1',
          '@nestjs/typeorm': '12.0.2',
          '@nestjs/microservices': '12.1.1',
        }),
      ),
    ).toEqual([]);
    expect(peerVersionWarnings(versions({ '@nestjs/core': '11.0.0' }))).toEqual([]);
    expect(peerVersionWarnings(versions({}))).toEqual([]);
  });
});

describe(installedVersion.name, () => {
  it("reads an installed package's version, and answers undefined for one that is not there", () => {
    expect(installedVersion('@nestjs/core')).toMatch(/^\d+\.\d+\.\d+/);
    expect(installedVersion('surely-not-installed-package')).toBeUndefined();
  });
});
