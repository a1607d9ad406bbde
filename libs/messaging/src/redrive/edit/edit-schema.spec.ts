import { z } from 'zod';
import { defineEvent } from '../../envelope/event-definition';
import { checkEditSchema } from './edit-schema';

const v1 = defineEvent({
  type: 'PostCreated',
  destination: 'post-create',
  schema: z.object({ postId: z.number().int(), title: z.string().min(1) }),
  key: (p) => p.postId,
});
const v2 = defineEvent({
  type: 'PostCreated',
  destination: 'post-create',
  version: 2,
  schema: z.object({ postId: z.number().int(), title: z.string(), tags: z.array(z.string()) }),
  key: (p) => p.postId,
  upcasters: { 1: (p: { postId: number; title: string }) => ({ ...p, tags: [] }) },
});

describe(checkEditSchema.name, () => {
  const headers = { 'msg.type': 'PostCreated' };

  it('passes a payload the definition of its type and version accepts', () => {
    expect(checkEditSchema([v1], headers, { postId: 1, title: 'x' })).toEqual({ kind: 'valid' });
    expect(
      checkEditSchema(
        [v1, v2],
        { ...headers, 'msg.event-version': '2' },
        { postId: 1, title: 'x', tags: [] },
      ),
    ).toEqual({ kind: 'valid' });
  });

  it('names the paths and codes the schema refuses, never the values', () => {
    const check = checkEditSchema([v1], headers, { postId: 'secret-value', title: '' });
    expect(check.kind).toBe('invalid');
    const issues = check.kind === 'invalid' ? check.issues.join(' ') : '';
    expect(issues).toContain('/postId: invalid_type');
    expect(issues).toContain('/title: too_small');
    expect(issues).not.toContain('secret-value');
  });

  it('knows nothing of a type without definition, or of another version', () => {
    expect(checkEditSchema([], headers, {})).toEqual({
      kind: 'unknown',
      detail: 'no event definition of PostCreated is known',
    });
    expect(checkEditSchema([v2], headers, {})).toEqual({
      kind: 'unknown',
      detail: 'PostCreated is known at version 2, the message is version 1',
    });
    expect(checkEditSchema([v1], {}, {})).toMatchObject({ kind: 'unknown' });
  });
});
