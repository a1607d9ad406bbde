import { relativeAge } from './time';

/**
 * The console's only script, served by the console itself (`assets/console.js`: the pages' CSP allows
 * scripts from the console only, never inline). Pages work without it; with it:
 * - every `<time data-console-time>` (rendered in UTC) reads in the viewer's zone, with its age ("4 min
 *   ago") kept current (`relativeAge`, the server's own function);
 * - a button `data-copy="<id>"` copies that element's text;
 * - a page whose `<main>` has `data-refresh="<seconds>"` refreshes its content that often, sending
 *   `x-console-refresh: 1` (not the user's doing: it does not keep an idle session alive), one refresh at a
 *   time (a console slower than the period is not sent more), and not while the tab is hidden, a form
 *   control has focus, or a form holds changed input; a session that ended sends the page to sign-in.
 */
export const CONSOLE_JS = `(function () {
  'use strict';
  var relativeAge = ${relativeAge.toString()};
  function pad(n) { return String(n).padStart(2, '0'); }
  function zoneOf(date) {
    try {
      var part = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' })
        .formatToParts(date).find(function (p) { return p.type === 'timeZoneName'; });
      return part ? part.value : '';
    } catch (e) { return ''; }
  }
  function local(date) {
    return date.getFullYear() + '-' + pad(date.getMonth() + 1) + '-' + pad(date.getDate()) + ' ' +
      pad(date.getHours()) + ':' + pad(date.getMinutes()) + ':' + pad(date.getSeconds()) + ' ' + zoneOf(date);
  }
  function localise(root) {
    var now = Date.now();
    root.querySelectorAll('time[data-console-time]').forEach(function (el) {
      var date = new Date(el.getAttribute('datetime'));
      if (isNaN(date.getTime())) return;
      el.textContent = local(date) + ' (' + relativeAge(date.getTime(), now) + ')';
      el.setAttribute('data-localised', '');
    });
  }
  function copying(root) {
    root.querySelectorAll('button[data-copy]').forEach(function (button) {
      if (button.hasAttribute('data-copy-ready')) return;
      button.setAttribute('data-copy-ready', '');
      button.hidden = false;
      button.addEventListener('click', function () {
        var source = document.getElementById(button.getAttribute('data-copy'));
        var status = document.getElementById(button.getAttribute('data-copy') + '-copied');
        if (!source || !navigator.clipboard) return;
        navigator.clipboard.writeText(source.textContent || '').then(
          function () { if (status) status.textContent = 'Copied.'; },
          function () { if (status) status.textContent = 'Could not copy: select the text instead.'; }
        );
      });
    });
  }
  function busy(main) {
    var active = document.activeElement;
    if (active && active.closest && active.closest('form') && active.matches('input, select, textarea')) return true;
    return Array.prototype.some.call(main.querySelectorAll('input, textarea, select'), function (el) {
      if (el.type === 'hidden') return false;
      if (el.tagName === 'SELECT') {
        return Array.prototype.some.call(el.options, function (o) { return o.selected !== o.defaultSelected; });
      }
      if (el.type === 'checkbox' || el.type === 'radio') return el.checked !== el.defaultChecked;
      return el.value !== el.defaultValue;
    });
  }
  function refreshing() {
    var main = document.querySelector('main[data-refresh]');
    if (!main) return;
    var seconds = Number(main.getAttribute('data-refresh'));
    if (!(seconds > 0)) return;
    var inFlight = false;
    setInterval(function () {
      var current = document.querySelector('main[data-refresh]');
      if (inFlight || !current || document.hidden || busy(current)) return;
      inFlight = true;
      fetch(location.href, { headers: { 'x-console-refresh': '1' }, credentials: 'same-origin' })
        .then(function (response) {
          if (response.redirected && /\\/login$/.test(new URL(response.url).pathname)) {
            location.assign(response.url);
            return;
          }
          if (!response.ok) return;
          return response.text().then(function (text) {
            var next = new DOMParser().parseFromString(text, 'text/html').querySelector('main');
            var now = document.querySelector('main[data-refresh]');
            if (!next || !now || busy(now)) return;
            now.innerHTML = next.innerHTML;
            now.setAttribute('data-refreshed', String(Number(now.getAttribute('data-refreshed') || '0') + 1));
            localise(now);
            copying(now);
          });
        })
        .catch(function () { /* the next round tries again */ })
        .then(function () { inFlight = false; });
    }, seconds * 1000);
  }
  function start() {
    localise(document);
    copying(document);
    refreshing();
    setInterval(function () { localise(document); }, 30000);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
`;
