// Package host holds what the example programs do around the SDK, the
// parts every host program writes once in its own way: the program's
// start and end (signals, exit status), calling tools without a model,
// running the agent on one question, and printing the start-up banner and
// a run's events.
package host
