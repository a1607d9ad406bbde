import { layerViolations, roomImports, roomOf } from './layers';

describe('layers', () => {
  const layers = [['errors/'], ['retry/', 'envelope/'], ['consumers/']];
  const edge = (from: string, to: string) => ({ from, to, files: [`${from}a.ts -> ${to}b`] });

  describe('roomOf', () => {
    it('is the top-level folder of a file, or the file itself', () => {
      expect(roomOf('outbox/logical/logical-relay.ts')).toBe('outbox/');
      expect(roomOf('index.ts')).toBe('index.ts');
    });
  });

  describe('layerViolations', () => {
    it('lets a room import its own layer and the layers below', () => {
      expect(layerViolations([edge('consumers/', 'retry/'), edge('retry/', 'envelope/')], layers)).toEqual(
        [],
      );
    });

    it('refuses an import that points up, naming the files', () => {
      expect(layerViolations([edge('retry/', 'consumers/')], layers)).toEqual([
        'retry/ (layer 1) imports consumers/ (layer 2), which stands above it: retry/a.ts -> consumers/b',
      ]);
    });

    it('refuses two rooms of one layer that import each other', () => {
      expect(layerViolations([edge('retry/', 'envelope/'), edge('envelope/', 'retry/')], layers)).toEqual([
        'envelope/ and retry/ import each other',
      ]);
    });

    it('names a room that stands in no layer', () => {
      expect(layerViolations([edge('cli/', 'errors/')], layers)).toEqual([
        'cli/ stands in no layer: add it to LAYERS (tools/arch/layers.ts)',
      ]);
    });
  });

  it("holds for the library's sources: every import points down", () => {
    expect(layerViolations(roomImports())).toEqual([]);
  });
});
