// Turning API values into short text for people: dates, counts and rate limits.

import { tierFor } from './catalog.js';

/** "23 Nov 2025, 09:41" in the viewer's time zone, with the exact ISO time kept for a tooltip. */
export function formatDate(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

/** "23 Nov 2025": the day alone, for narrow table cells (the exact time goes in a tooltip). */
export function formatDay(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleDateString([], { dateStyle: 'medium' });
}

/** "3 min ago", "2 h ago", or the date when older than a day. */
export function formatRelative(iso, now = Date.now()) {
  if (!iso) return 'never';
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return String(iso);
  const seconds = Math.round((now - time) / 1000);
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return formatDay(iso);
}

export function formatCount(value) {
  return Number(value ?? 0).toLocaleString('en');
}

/** "Pro · 1,000/min", or "Custom · 250/min". */
export function formatRateLimit(rateLimit) {
  const tier = tierFor(rateLimit);
  return `${tier ? tier.label : 'Custom'} · ${formatCount(rateLimit)}/min`;
}
