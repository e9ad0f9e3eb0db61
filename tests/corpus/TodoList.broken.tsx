import React, { useState } from "react";

type Todo = { id: number; text: string; done: boolean };

interface Props {
  initial: Todo[];
  onChange?: (todos: Todo[]) => void;
}

/** Renders the list; JSX text like "don't" must not open a string. */
export function TodoList({ initial, onChange }: Props): JSX.Element {
  const [todos, setTodos] = useState<Todo[]>(initial);

  const toggle = (id: number) => {
    const next = todos.map((t) => (t.id === id ? { ...t, done: !t.done } : t);
    setTodos(next);
    onChange?.(next);
  };

  return (
    <ul className="todos">
      {todos.map((todo) => (
        <li key={todo.id} onClick={() => toggle(todo.id)}>
          {todo.done ? <s>{todo.text}</s> : todo.text} - don't forget (soon)
        </li>
      ))}
      <li>Total: {todos.length} / {initial.length}</li>
      <br />
    </ul>
  );
}

export default class Counter extends React.Component<{}, { n: number }> {
  state = { n: 0 };

  render() {
    return <button onClick={() => this.setState({ n: this.state.n + 1 })}>{this.state.n}</button>;
  }
}
