import { AdminCredential } from '../admin-connection';

/** The broker URL with the admin credential as its user (whatever user the URL carried is replaced). */
export function adminAmqpUrl(url: string, credential: AdminCredential): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(credential.principal);
  parsed.password = encodeURIComponent(credential.secret);
  return parsed.toString();
}
