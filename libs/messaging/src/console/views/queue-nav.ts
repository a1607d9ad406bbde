import { html, Html } from './html';
import { PageContext } from './layout';

/** Links between a queue's views: its head, groups, all messages, search, archive. */
export function queueViews(context: PageContext, queue: string): Html {
  const path = queuePath(context, queue);
  return html`<nav aria-label="Views of ${queue}" class="inline">
    <a href="${path}">Head</a> · <a href="${path}/groups">Grouped by cause</a> ·
    <a href="${path}/all">All messages</a> · <a href="${path}/search">Find a message</a> ·
    <a href="${path}/archive">Archive (discarded)</a>
  </nav>`;
}

/** The path of a dead-letter queue's page. */
export function queuePath(context: PageContext, queue: string): string {
  return `${context.base}/dead-letters/${encodeURIComponent(queue)}`;
}
