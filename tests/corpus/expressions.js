'use strict';

var assign = (Object.create ? (function (o, v) {
  Object.defineProperty(o, 'default', { enumerable: true, value: v });
  return o;
}) : function (o, v) {
  o['default'] = v;
});

var getProto = Object.getPrototypeOf
  ? function getProto(O) {
      return Object.getPrototypeOf(O);
    }
  : null;

function f(a, { b, c }) {
  return a + b + c;
}

function g(
  a,
  { b = {}, c = [] }
) {
  return [a, b, c];
}

module.exports = { assign: assign, getProto: getProto, f: f, g: g };

module.exports.proto = Reflect.getPrototypeOf
  ? function getProto(O) {
      return Reflect.getPrototypeOf(O);
    }
  : Object.getPrototypeOf
    ? function getProto(O) {
        return Object.getPrototypeOf(O);
      }
    : null;
