package mathml

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// katexVersion is the version of katex/katex.min.js; a test checks it against the script.
const katexVersion = "0.16.47"

//go:embed katex/katex.min.js
var katexJS string

// renderJS is KaTeX's renderToString with this package's options. trust off makes
// \href, \url, \includegraphics and \html… render as their name; strict "ignore" takes
// KaTeX's extensions to LaTeX (such as Unicode text in math) without complaint; maxSize
// caps the sizes a formula gives (\rule, \kern…) at 20 em; maxExpand stops it after
// 1000 macro expansions.
const renderJS = `(function (tex, displayMode) {
	return katex.renderToString(tex, {
		output: "mathml", displayMode: displayMode, throwOnError: true,
		trust: false, strict: "ignore", maxSize: 20, maxExpand: 1000
	});
})`

// program is katex.min.js compiled once for all runtimes.
var program = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("katex.min.js", katexJS, true)
})

// engine is a goja runtime with KaTeX loaded, used by one goroutine at a time.
type engine struct {
	vm             *goja.Runtime
	renderToString goja.Callable // renderJS
	parseError     *goja.Object  // katex.ParseError
	interrupted    bool          // Interrupt was called: the runtime is not to be reused
}

// newEngine loads KaTeX into a new runtime; ctx cancels it.
func newEngine(ctx context.Context) (*engine, error) {
	prog, err := program()
	if err != nil {
		return nil, fmt.Errorf("mathml: compiling KaTeX: %w", err)
	}
	vm := goja.New()
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(ctx.Err()) })
	e, err := load(vm, prog)
	if !stop() {
		return nil, ctx.Err()
	}
	return e, err
}

// load runs KaTeX and renderJS in vm.
func load(vm *goja.Runtime, prog *goja.Program) (*engine, error) {
	if _, err := vm.RunProgram(prog); err != nil {
		return nil, fmt.Errorf("mathml: loading KaTeX: %w", err)
	}
	fn, err := vm.RunString(renderJS)
	if err != nil {
		return nil, fmt.Errorf("mathml: loading KaTeX: %w", err)
	}
	renderToString, ok := goja.AssertFunction(fn)
	katex := vm.Get("katex")
	if !ok || katex == nil {
		return nil, errors.New("mathml: loading KaTeX: no katex object")
	}
	parseError, ok := katex.ToObject(vm).Get("ParseError").(*goja.Object)
	if !ok {
		return nil, errors.New("mathml: loading KaTeX: no katex.ParseError")
	}
	return &engine{vm: vm, renderToString: renderToString, parseError: parseError}, nil
}

// render returns KaTeX's markup for tex, interrupting KaTeX at the deadline or when ctx
// is done.
func (e *engine) render(ctx context.Context, tex string, display bool) (string, error) {
	timer := time.AfterFunc(deadline, func() { e.vm.Interrupt(ErrTooSlow) })
	stop := context.AfterFunc(ctx, func() { e.vm.Interrupt(ctx.Err()) })
	v, err := e.renderToString(goja.Undefined(), e.vm.ToValue(tex), e.vm.ToValue(display))
	timerStopped, ctxStopped := timer.Stop(), stop()
	e.interrupted = !timerStopped || !ctxStopped
	if err == nil {
		return v.String(), nil
	}
	var interrupt *goja.InterruptedError
	if errors.As(err, &interrupt) {
		if cause := interrupt.Unwrap(); !errors.Is(cause, ErrTooSlow) {
			return "", cause
		}
		return "", fmt.Errorf("%w: KaTeX took over %v", ErrTooSlow, deadline)
	}
	var exception *goja.Exception
	if !errors.As(err, &exception) {
		return "", fmt.Errorf("mathml: KaTeX failed: %w", err)
	}
	if e.vm.InstanceOf(exception.Value(), e.parseError) {
		return "", fmt.Errorf("%w: %s", ErrInvalid, parseMessage(exception.Value().(*goja.Object)))
	}
	return "", fmt.Errorf("mathml: KaTeX failed: %s", exception.Value()) // without the stack
}

// parseMessage is a KaTeX ParseError's message without the copy of the formula that
// KaTeX appends, which underlines the error with combining characters.
func parseMessage(err *goja.Object) string {
	msg := err.Get("rawMessage").String()
	if pos := err.Get("position"); pos != nil && !goja.IsUndefined(pos) {
		msg += fmt.Sprintf(" at position %d", pos.ToInteger()+1)
	}
	return msg
}

// The pool: idle holds loaded engines; slots, at most one per CPU, bounds the engines in
// use and so the engines that exist. An engine is loaded when a slot is taken and none
// is idle.
var (
	slots = make(chan struct{}, runtime.GOMAXPROCS(0))
	idle  = make(chan *engine, cap(slots))
)

// acquire takes a slot and an engine, waiting for a slot until ctx is done.
func acquire(ctx context.Context) (*engine, error) {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case e := <-idle:
		return e, nil
	default:
	}
	e, err := newEngine(ctx)
	if err != nil {
		<-slots
		return nil, err
	}
	return e, nil
}

// release gives back e's slot, and e for reuse unless it was interrupted.
func release(e *engine) {
	if !e.interrupted {
		idle <- e
	}
	<-slots
}
