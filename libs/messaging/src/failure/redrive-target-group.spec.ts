import { isRedriveForAnotherGroup } from './redrive-target-group';

describe(isRedriveForAnotherGroup.name, () => {
  it('is true only for a redriven copy that names another group', () => {
    const redriven = { 'msg.redrive-id': 'r-1', 'msg.redrive-group': 'billing' };
    expect(isRedriveForAnotherGroup(redriven, 'mail')).toBe(true);
    expect(isRedriveForAnotherGroup(redriven, 'billing')).toBe(false);
    expect(isRedriveForAnotherGroup({ 'msg.redrive-id': 'r-1' }, 'mail')).toBe(false);
    expect(isRedriveForAnotherGroup({ 'msg.redrive-group': 'billing' }, 'mail')).toBe(false);
    expect(isRedriveForAnotherGroup({}, 'mail')).toBe(false);
  });
});
