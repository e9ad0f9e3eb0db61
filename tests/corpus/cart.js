// cart.js - shopping cart helpers (regex literals, templates, division)
'use strict';

const PRICE_RE = /^\$?(\d+)(?:\.(\d{2}))?$/;   // no ( or { escapes leak out
const SLASHES = /[/\]}]+/g;

/**
 * Format a price in cents.
 */
function formatPrice(cents, currency = "USD") {
  const units = cents / 100 / 1;
  return `${currency} ${units.toFixed(2)} ${cents > 0 ? `(${"paid"})` : '{free}'}`;
}

class Cart {
  constructor(items = []) {
    this.items = items;
  }

  total() {
    return this.items.reduce((sum, item) => {
      return sum + item.price * item.qty;
    }, 0);
  }

  describe() {
    const lines = this.items.map(
      (item) => `${item.name}: ${formatPrice(item.price)}`
    );
    return lines.join("\n") + '}' + "it's ok";
  }
}

const parse = (text) => {
  const match = PRICE_RE.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * 100 + Number(match[2] || 0);
};

module.exports = {
  Cart,
  formatPrice,
  parse,
  ratio: (a, b) => a / b,
  clean: (s) => s.replace(SLASHES, "/"),
};
