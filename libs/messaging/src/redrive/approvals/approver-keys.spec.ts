import { ApproverKeyring } from './approver-keyring';
import { generateApproverKeys, readApproverSigner } from './approver-keys';

describe('approver keys', () => {
  it('makes an Ed25519 key pair whose private key file reads back as a signer', () => {
    const { privateKeyFile, publicKey } = generateApproverKeys('jane.doe');
    expect(privateKeyFile).toMatchObject({ version: 1, approver: 'jane.doe' });
    expect(privateKeyFile.privateKey).toContain('BEGIN PRIVATE KEY');
    expect(publicKey.publicKey).toContain('BEGIN PUBLIC KEY');
    const signer = readApproverSigner(JSON.parse(JSON.stringify(privateKeyFile)));
    expect(signer.approver).toBe('jane.doe');
    expect(signer.key.asymmetricKeyType).toBe('ed25519');
  });

  it('encrypts the private key with a passphrase, which then opens it', () => {
    const { privateKeyFile } = generateApproverKeys('jane.doe', 'correct horse');
    expect(privateKeyFile.privateKey).toContain('ENCRYPTED PRIVATE KEY');
    expect(() => readApproverSigner(privateKeyFile)).toThrow();
    expect(() => readApproverSigner(privateKeyFile, 'wrong')).toThrow();
    expect(readApproverSigner(privateKeyFile, 'correct horse').approver).toBe('jane.doe');
  });

  it('refuses names with control characters or spaces', () => {
    for (const name of ['jane\u0007', 'jane doe', '', '-jane', 'jane\u202e']) {
      expect(() => generateApproverKeys(name)).toThrow();
    }
  });

  describe(ApproverKeyring.name, () => {
    it('knows its approvers by exact name; refuses a name given twice and keys that are not Ed25519', () => {
      const jane = generateApproverKeys('jane.doe').publicKey;
      const keyring = ApproverKeyring.parse({ version: 1, approvers: [jane] });
      expect(keyring.publicKeyOf('jane.doe')).toBeDefined();
      expect(keyring.publicKeyOf('mallory')).toBeUndefined();
      const again = { ...generateApproverKeys('Jane.Doe').publicKey };
      expect(() => ApproverKeyring.parse({ version: 1, approvers: [jane, again] })).toThrow(/twice/);
      const rsa = { approver: 'x', publicKey: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' };
      expect(() => ApproverKeyring.parse({ version: 1, approvers: [rsa] })).toThrow();
    });
  });
});
