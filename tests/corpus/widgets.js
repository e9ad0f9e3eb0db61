// widgets.js - a tiny widget registry (class expressions, keyword-named methods)
'use strict';

const DEBUG = typeof process !== 'undefined' && process.env.WIDGETS_DEBUG === '1';
const ITERATE = Symbol.for('widgets.iterate');

/**
 * A Map that remembers insertion order of ids and never throws on lookups.
 */
var Registry = class WidgetRegistry extends Map {
  constructor(entries = []) {
    super(entries);
    this.order = entries.map(([id]) => id);
  }

  default(id, make) {
    if (!this.has(id)) {
      this.set(id, make(id));
      this.order.push(id);
    }
    return this.get(id);
  }

  delete(id) {
    const index = this.order.indexOf(id);
    if (index >= 0) {
      this.order.splice(index, 1);
    }
    return super.delete(id);
  }

  do(action, ...args) {
    for (const id of this.order) {
      const widget = this.get(id);
      if (typeof widget[action] === 'function') {
        widget[action](...args);
      }
    }
    return this;
  }

  [Symbol.for("widgets.iterate")](visit) {
    this.order.forEach((id, i) => visit(this.get(id), i));
  }

  *[Symbol.iterator]() {
    for (const id of this.order) {
      yield [id, this.get(id)];
    }
  }
};

const log = DEBUG
  ? function debugLog(message, ...rest) {
      console.log('[widgets] ' + message, ...rest);
    }
  : function quietLog() {
      return undefined;
    };

// Adds event listeners to any widget class.
const Observable = (Base) => class extends Base {
  on(event, handler) {
    (this.handlers || (this.handlers = [])).push([event, handler]);
    return this;
  }

  emit(event, payload) {
    try {
      (this.handlers || []).forEach(([name, handler]) => name === event && handler(payload));
    } catch (error) {
      log('handler failed: ' + error.message);
    }
  }
};

function createButton(label, onClick) {
  const state = { pressed: false, label };
  return {
    kind: 'button',
    render() {
      return `<button aria-pressed="${state.pressed}">${state.label}</button>`;
    },
    when(condition) {
      return condition ? this : null;
    },
    new(overrides) {
      return createButton(overrides.label || label, overrides.onClick || onClick);
    },
    click() {
      state.pressed = !state.pressed;
      if (onClick) {
        onClick(state);
      }
    },
  };
}

const registry = new Registry();
registry.default('ok', () => createButton('OK', () => log('ok pressed')));
registry.default('cancel', () => createButton('Cancel', null));
registry[ITERATE]((widget, i) => log(`widget ${i}: ${widget.kind}`));

module.exports = { Registry, createButton, registry };
