// Package lazyre is a regular expression compiled on its first use rather
// than at package initialisation: awr's packages hold dozens of
// expressions, and a short command that uses none of them should not pay
// for compiling them at every start.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a *regexp.Regexp compiled on first use. Its methods are the
// ones of regexp.Regexp that awr calls.
type Regexp struct {
	src      string
	once     sync.Once
	compiled *regexp.Regexp
}

// New returns the expression src, compiled on first use; an invalid src
// panics then, as regexp.MustCompile does at initialisation (the tests of
// the package that declares it reach every use). New itself only records
// src: a package-level expression costs one small allocation at start-up,
// or none when the compiler lays it out statically.
func New(src string) *Regexp {
	return &Regexp{src: src}
}

func (r *Regexp) re() *regexp.Regexp {
	r.once.Do(r.compile)
	return r.compiled
}

func (r *Regexp) compile() { r.compiled = regexp.MustCompile(r.src) }

// Regexp returns the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp { return r.re() }

func (r *Regexp) String() string                         { return r.re().String() }
func (r *Regexp) MatchString(s string) bool              { return r.re().MatchString(s) }
func (r *Regexp) Match(b []byte) bool                    { return r.re().Match(b) }
func (r *Regexp) FindString(s string) string             { return r.re().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int         { return r.re().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string   { return r.re().FindStringSubmatch(s) }
func (r *Regexp) FindStringSubmatchIndex(s string) []int { return r.re().FindStringSubmatchIndex(s) }
func (r *Regexp) FindAllString(s string, n int) []string {
	return r.re().FindAllString(s, n)
}
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.re().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.re().FindAllStringSubmatchIndex(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.re().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.re().ReplaceAllStringFunc(src, repl)
}
func (r *Regexp) Split(s string, n int) []string   { return r.re().Split(s, n) }
func (r *Regexp) SubexpIndex(name string) int      { return r.re().SubexpIndex(name) }
func (r *Regexp) SubexpNames() []string            { return r.re().SubexpNames() }
func (r *Regexp) FindAll(b []byte, n int) [][]byte { return r.re().FindAll(b, n) }
