// The streamed answer's live tail. A text event must reach the DOM within a frame of its
// arrival (docs/PERFORMANCE.md), so tokens do not go through a state update and a re-render of
// the thread: LiveText owns one element outside Preact's diff, appends each token to it as a
// text node at once (text, never HTML), and re-renders the whole message as sanitised Markdown
// (renderMarkdown: marked + DOMPurify) at most once per animation frame, replacing the plain
// tail. When the message ends (a tool call, the turn's end) the chat freezes the text into the
// thread as an ordinary message and the live element empties.
import { Component } from 'preact';
import { renderMarkdown } from './markdown';

export class LiveStream {
  text = '';
  private el: HTMLElement | null = null;
  private md: HTMLElement | null = null;
  private tail: Text | null = null;
  private frame = 0;

  attach(el: HTMLElement | null) {
    this.el = el;
    if (!el) { cancelAnimationFrame(this.frame); this.frame = 0; return; }
    el.textContent = '';
    this.md = document.createElement('div');
    this.md.className = 'md';
    this.tail = document.createTextNode('');
    el.append(this.md, this.tail);
    this.paint();
  }

  // push appends a token: to the DOM now as plain text, as Markdown at the next frame. at is
  // when its SSE chunk reached the page; the time from then to the DOM append is recorded as
  // the harness:token measure (docs/PERFORMANCE.md).
  push(s: string, at?: number) {
    this.text += s;
    if (!this.el) return;
    this.el.hidden = false;
    this.tail!.appendData(s);
    if (at !== undefined) performance.measure('harness:token', { start: at, end: performance.now() });
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.paint(); });
  }

  // take ends the message: its whole text, and the live element emptied for the next one.
  take(): string {
    const s = this.text;
    if (this.frame) {
      // The frame did not come before the message ended: its Markdown is rendered now (and
      // cached, so the thread's copy of it costs no second parse).
      cancelAnimationFrame(this.frame);
      this.frame = 0;
      this.paint();
    }
    this.text = '';
    this.paint();
    return s;
  }

  private paint() {
    if (!this.el || !this.md || !this.tail) return;
    this.md.innerHTML = this.text ? renderMarkdown(this.text) : '';
    this.tail.data = '';
    this.el.hidden = !this.text;
    if (this.text) performance.mark('harness:md-frame');
    const list = this.el.parentElement;
    if (this.text && list) list.scrollTop = list.scrollHeight;
  }
}

// LiveText is the live element of one stream; Preact mounts it once and never diffs inside it.
export class LiveText extends Component<{ stream: LiveStream }> {
  shouldComponentUpdate(next: { stream: LiveStream }) { return next.stream !== this.props.stream; }
  componentWillUnmount() { this.props.stream.attach(null); }
  render() {
    return <div class="msg bot live" aria-live="off" ref={(el) => this.props.stream.attach(el as HTMLElement | null)} />;
  }
}
