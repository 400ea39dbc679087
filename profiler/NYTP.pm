package Devel::NYTP;
# Devel::NYTP — the NYTProf-compatible profiler of nytp.  The work is done
# in C (NYTP.c and the other .c files beside it); this file sets perl's debugger flags, reads the options
# from $ENV{NYTPROF} and starts the profiler.  No 'use strict' or 'use
# warnings' here: modules loaded before the profiler starts would be
# missing from the profile of a program that uses them.

our $VERSION = '0.1';

# Perl's debugger flags ($^P) first, before anything else is compiled:
# keep the line ranges of subs (%DB::sub), and give string evals and
# anonymous subs names that say where they were defined.  (perl -d set
# them all, which would also keep the source of every file loaded from
# here on, and call DB::sub for every call.)
$^P = 0x010 | 0x100 | 0x200;

# Loaded from this package: XSLoader finds the shared object next to this
# file by the caller's package name (from DB it would fall back to
# DynaLoader, which loads more modules before profiling starts).
require XSLoader;
XSLoader::load('Devel::NYTP');

# nytp run finds this module through a directory it adds to @INC (-I, or
# PERL5LIB for --children) and names in NYTP_INC: taken out again here,
# so that the program sees @INC as perl alone would have made it.
if (defined(my $dir = $ENV{NYTP_INC})) {
    for my $i (0 .. $#INC) {
        next if ref $INC[$i] || $INC[$i] ne $dir;
        splice @INC, $i, 1;
        last;
    }
}

package    # not indexed: the DB package belongs to the debugger interface
    DB;

# Our own finish_profile, taken now: a program that loads Devel::NYTProf's
# XS later gets DB::finish_profile replaced by that module's.
my $finish_profile = \&DB::finish_profile;

# NYTPROF=opt=value:opt=value ... ; a backslash escapes the next character.
# (sigexit= is set below perl, in C: the program's %SIG stays its own.)
if (defined(my $spec = $ENV{NYTPROF})) {
    for my $item ($spec =~ /((?:[^\\:]|\\.)+)/gs) {
        my ($opt, $val) = $item =~ /\A((?:[^\\=]|\\.)+)=((?:[^\\=]|\\.)+)\z/s
            or die "Devel::NYTP: bad NYTPROF option '$item' (want name=value)\n";
        s/\\(.)/$1/gs for $opt, $val;
        if ($opt eq 'posix_exit') {
            # only needed with subs=0: with the sub profiler on, a call of
            # POSIX::_exit is seen and the profile finished first
            if ($val) {
                eval q{ INIT {
                    require POSIX;
                    my $orig = \&POSIX::_exit;
                    local $^W = 0;    # not 'no warnings': no module loads here
                    *POSIX::_exit = sub { $finish_profile->(); $orig->(@_) };
                } 1 } or die $@;
            }
            next;
        }
        DB::set_option($opt, $val);
    }
}

# use_db_sub=1: statements are measured by DB::DB, which perl calls
# before each statement while $DB::single is true.
*DB = \&DB_profiler if $ENV{NYTPROF} && $ENV{NYTPROF} =~ /\buse_db_sub=1\b/;

init_profiler();

1;

__END__

=head1 NAME

Devel::NYTP - a statement and subroutine profiler that writes NYTProf files

=head1 SYNOPSIS

  perl -d:NYTP script.pl          # writes ./nytprof.out
  NYTPROF=file=x.out:compress=0 perl -d:NYTP script.pl
  nytp run script.pl              # the same, with the profiler of the build
  nytp dump --data nytprof.out    # or nytprofhtml, Devel::NYTProf::Data

=head1 DESCRIPTION

Devel::NYTP measures a perl program the way L<Devel::NYTProf> does and
writes the same file format (NYTProf version 5.0), so every tool that
reads Devel::NYTProf's files reads these too.  Its file writing is done by
nytp's C library (libnytpformat); the module itself only measures.

What it records:

=over

=item statements

The time and the execution count of every statement, per line.  When
control returns into the middle of a statement (after a sub call, a block
or a loop iteration), the time until the next statement is added to that
statement without counting it again (the C<leave> option, on by default).
A statement that follows another on the same line (C<$x++; $y++> on one
line, or the next turn of a loop written on one line) takes no clock
reading of its own: the line is timed from the reading as control enters
it to the reading as control leaves it, so its total is the same, for
less of the profiler's own time in it.  Every execution is still counted;
in the file, such an execution has a time of 0 and the next one on that
line carries the time of both (Devel::NYTProf times each apart).

=item subroutines

Every call, summarised per call site: the calling file and line, the
calling sub, the number of calls, the inclusive and exclusive time, and
for recursion the time spent in inner calls and the maximum depth.  Perl
subs, xsubs, and perl's slow builtins (I/O, file tests, regex matches and
substitutions, sort...) as C<Pkg::CORE:name> pseudo subs.  The main
program is C<main::RUNTIME>; C<BEGIN> blocks are named C<Pkg::BEGIN@LINE>;
anonymous subs C<__ANON__[file:line]>, string evals C<(eval N)[file:line]>.
A sub left by C<die>, C<last> or C<next> is counted as it is left;
C<goto &sub> ends the current call and records the new sub as called by
the same caller, from the line of the C<goto>.

=item call events

A SUB_RETURN event per call (C<calls=1>, the default), also SUB_ENTRY
with C<calls=2>, none with C<calls=0>; C<nytp calls> and C<nytp flame>
read them.

=item files and source

Every file and string eval (with the file and line it ran from), the line
ranges of all subs (from C<%DB::sub>), and the source lines of every file
perl kept them for (C<savesrc=1>, the default: files loaded after the
profiler, C<-e>, standard input and string evals).  Subs that AutoLoader
loads from files split out of a module are shown in that module; code
compiled under C<#line N "... defined at FILE"> (as Class::MOP generates
it) counts as a string eval run from FILE.  At the end of the run C<@INC>
is written as the option C<inc>, its directories joined with C<:>
(hooks, and directories whose names hold a C<:> or a newline, left out):
C<nytp diff> makes file names relative to them, so that two checkouts of
a program compare.  Directories that would make that line longer than
8,191 bytes are left out too: Devel::NYTProf's reader loses a longer
line of a compressed file.  It is an option, not an attribute (as it was
before), so that Devel::NYTProf::Data's C<normalize_variables(1)>, which
clears the options, leaves a profile of ours as it leaves one of
Devel::NYTProf: Devel::NYTProf 6.12's own tests pass under Devel::NYTP.

=back

=head1 OPTIONS

Options are read from the C<NYTPROF> environment variable, as
C<name=value> pairs separated by colons; a backslash escapes the next
character (C<file=C\:\\x.out>).  An unknown option is an error before the
program runs.

=over

=item file=PATH

The profile (default F<./nytprof.out>).  A regular file is replaced, not
appended to, unless another process is writing it as its profile at
that moment (a perl run by a profiled one with C<-d:NYTP> in
C<PERL5OPT>, or the same program started twice): a profile is written
under an exclusive lock (flock), and a process that finds the file
locked writes F<FILE.PID> instead and says so (Devel::NYTProf truncates
the other's).  Under B<nytp run> each profile also carries the attribute
C<nytp_run> (from C<NYTP_RUN>), by which that run knows its own.  A device, a FIFO or a symbolic link (and the file it
leads to) is written through, never replaced.  A path that cannot be
written is an error before the program runs.

That is for the name given here only.  The names the profiler makes from
it (a child's F<FILE.PID>, F<FILE.TIME>, a segment's F<FILE.sN> and its
hidden temporary) are regular files it creates itself, never opened
through a symbolic link, a FIFO or a device: one found at such a name
(planted, perhaps, in a directory others can write to, such as
F</var/tmp>) is left as it is, untouched, and that process's profiling
stops there with a message (the segments before it are complete; a
child runs on unprofiled), and nothing blocks.

=item addpid=1, addtimestamp=1

Append C<.PID> and/or C<.TIME> (epoch seconds) to the file name.

=item sample=HZ

Sample HZ times a second (1 to 10000) instead of tracing every statement
and call; see L</SAMPLING>.  C<sample=0> (the default) traces.

=item threads=0

Start no thread: the profile is compressed and written on the program's
own thread (a traced program runs slower).  Sampling starts none anyway.
For programs that make system calls the kernel allows only in a process
with one thread: C<unshare(CLONE_NEWUSER)> (user namespaces: unshare(1),
rootless containers, sandboxes) fails with EINVAL while the writer
thread exists, and so does C<setns> into a user namespace; without the
profiler and with C<threads=0> they work.

=item rotate=SECONDS

Every SECONDS (0.01 or more) close the profile as a complete profile of
that interval and go on in F<FILE.s1>, F<FILE.s2>, ...; see L</ROTATION>.
SECONDS are seconds of the wall clock, whatever the profile's clock: with
a CPU-time clock (C<clock=2>, C<nytp run --sample --cpu>) too.

=item compress=N

Compression level 0 to 9 (default 6); 0 writes an uncompressed file.  The
compressing is done on a writer thread of its own (C<threads=0> or
NYTP_THREADS=0: on the program's thread), so the program waits only when
that thread falls behind.  In builds with Intel ISA-L (C<libisal-dev>) ISA-L deflates the
stream: levels 1, 2-6 and 7-9 become ISA-L's 1, 2 and 3; the default takes
a tenth of the CPU time of zlib's level 6 or less, for a larger file
(compress=7 to 9: smaller, at more than twice the CPU time).  On the
call-heavy programs of C<bench/run profiler> the default's file was about
1.3 times the size of Devel::NYTProf's, and zlib's level 6 would have
made it 0.5 to 0.75 times that size, at 2 to 4 times the program's own
CPU time.  NYTP_DEFLATE=zlib in the environment chooses zlib (the
deflater Devel::NYTProf uses at that level); either way the file is an
ordinary zlib stream that every reader of these files reads.

=item calls=0|1|2

Call events: none, SUB_RETURN (default), or SUB_ENTRY and SUB_RETURN.

=item stmts=0, subs=0, leave=0

Turn off the statement profiler, the sub profiler, or the correction for
control returning into a statement.

=item blocks=1

Also record, for every statement, the first line of its enclosing block
and sub (TIME_BLOCK chunks), so reports can show block and sub times.

=item slowops=0|1|2

Builtins as subs: not at all, all in package C<CORE> (C<CORE::print>), or
in the package of the calling code (C<main::CORE:print>, the default).

=item savesrc=0

Do not keep the source of files.  perl then keeps no source lines at all,
so none are saved, not even for string evals, C<-e> or standard input
(Devel::NYTProf 6.12 behaves the same).

Keeping the source, perl stores each line at its line number in an array
of its own, so a C<#line> directive with a line number in the billions
makes perl run out of memory ("Out of memory!") as the file compiles,
under Devel::NYTProf too: such a program needs C<savesrc=0>.  Its subs
then get their line numbers right, also past 2**31, where perl's
C<%DB::sub> has the first line negative (Devel::NYTProf warns and makes
it 0).

When sampling (C<sample=HZ>) and C<savesrc> is not given, only the source
of string evals that define subs is kept (perl keeping every line of
every file it compiles cost more than sampling: 164 million instructions
of the 186 million that sampling added to loading Perl::Tidy); reports
read the files from disk.  C<savesrc=1> keeps everything, C<savesrc=0>
nothing.

=item start=begin|init|end|no

When to start profiling: at once (default), at INIT time, when END blocks
begin, or only when the program calls C<DB::enable_profile>.

=item clock=N

The POSIX clock id for timing, read with clock_gettime (100 ns ticks).
Without this option the clock is CLOCK_MONOTONIC (the profile says
C<clock_id> 1), read through the CPU's time-stamp counter where
F</proc/cpuinfo> reports both C<constant_tsc> and C<nonstop_tsc> (x86):
its rate is measured against CLOCK_MONOTONIC for 2 ms at start and again
from the whole run once a second, and its ticks never go backwards.  That
is about a third cheaper than clock_gettime on a virtual machine.
C<clock=1> reads CLOCK_MONOTONIC itself; C<NYTP_TSC=0> in the environment
does the same.  With C<trace=1> the profiler says which clock it uses.

The CPU-time clocks, C<clock=2> (CLOCK_PROCESS_CPUTIME_ID: every thread
of the process, the profiler's writer thread included) and C<clock=3>
(CLOCK_THREAD_CPUTIME_ID: the interpreter's thread), have no fast path:
each reading is a system call.  A program of many short statements runs
several times slower under them: perltidy, which took 5.6 to 6.6 s with
the default clock on this project's VM (3.3 to 3.9 s unprofiled), took
14 to 16 s with either, close to half of it in the kernel.  Each
reading's cost is charged to the statement it ends, so in code of short
statements it hides a change: a sub made 1.45 times slower showed +25%
traced on either (bench/run ci_gate).  Where the time must not
count waiting for the CPU, as in a time gate in CI, sample on them
instead (C<sample=HZ> with C<clock=2>, C<nytp run --sample --cpu>: one
reading a sample; see nytp-diff(1)).

The clock is read once per event: a statement, the call of an xsub or
slow op, the end of a call.  The call of a perl sub starts at the next
reading (its first statement's), and a statement after a call ends shares
that call's reading.  The profiler's own time between two readings is
therefore part of the statement's (and of the enclosing calls' inclusive
times), not taken out as Devel::NYTProf does with a second reading.

=item forkdepth=N

How many generations of child processes to profile (default -1: all;
0: none).

=item nameevals=0, nameanonsubs=0

As in Devel::NYTProf 6.12, these keep only the perl debugger flag of that
name (recorded in the profile's C<PL_perldb> attribute).

=item sigexit=1 or sigexit=INT,TERM,... or sigexit=0

Finish the profile when one of these signals arrives, then die of the
same signal, as the program would have without the option (so its parent
sees which signal ended it; Devel::NYTProf exits with status 1 instead).
C<1> means INT, HUP, TERM, PIPE, BUS and SEGV (Devel::NYTProf 6.12 leaves
out TERM); C<0> takes back what an earlier C<sigexit> set (C<nytp run>
gives C<sigexit=INT,HUP,TERM> unless the options name C<sigexit>; names
may be given as C<TERM>, C<term> or C<SIGTERM>).

The handlers are C handlers below perl, not C<%SIG> handlers: the
program's C<%SIG> reads as without the profiler (C<$SIG{TERM}> is
undefined, so C<use sigtrap qw(die untrapped normal-signals)> installs its
own), and a program that sets C<$SIG{TERM}> (a handler, C<'IGNORE'>,
C<'DEFAULT'>, or a C<local> that ends) takes the signal over from the
profiler for good, as perl's own C<sigaction> replaces the profiler's:
its handler rules, and when it exits or dies the profile is finished at
the end as always.  A signal ignored when the profiler starts (C<nohup>,
a shell's C<&>) stays ignored.  The profile is finished at perl's next
safe point, as C<%SIG> handlers run: a blocking call (a read, C<sleep>)
returns at once, but a long call into C code is waited for (the same
signal sent again meanwhile acts at once, the profile cut).  A fault
raised by the kernel (a real SEGV, BUS, ILL or FPE) cannot wait: the
process dies of it at once, its profile cut where it struck.  KILL and
STOP cannot be caught: a program killed with C<kill -9> leaves a profile
cut where the signal struck (readers keep what came before the cut).

=item posix_exit=1

Finish the profile in C<POSIX::_exit> even with C<subs=0>.

=item use_db_sub=1

Measure statements through C<DB::DB>, which perl calls before every
statement while C<$DB::single> is true, instead of through perl's ops
(slower; for comparison).

=item findcaller=1

Work out the calling sub from perl's context stack at every call instead
of taking it from the call being profiled.

=item optimize=0

Ask perl not to optimise the program (the C<$^P> flag 0x04); statement
counts can differ from those of the optimised program.

=item endatexit=1

Have perl run END blocks, and so finish the profile, even where an
embedding application would not.

=item libcexit=1

Finish a profile that is still open when the process ends through libc's
C<exit()> without perl's END blocks.

=item trace=N, log=FILE

Messages of the profiler about itself: with C<trace=1> start-up, the
clock, start and stop, files opened and closed, forks, and at the end of
each process how many times it read the clock (once per statement that
does not stay on the line of the one before, and at the end of each call;
an xsub or a builtin also at its start: C<make bench> multiplies that by
the cost of one reading); C<trace=2> adds every new
file id.  They go to standard error, or are appended to FILE with C<log>.
(The messages are not those of Devel::NYTProf.)

=item usecputime=1

Removed, as from Devel::NYTProf 6: with it the profiler says so on
standard error (once) and does not profile at all; no profile is written
and the program runs unprofiled.  To measure CPU time instead of wall
time choose the clock: C<clock=2> is C<CLOCK_PROCESS_CPUTIME_ID> on Linux
(see C<clock=N>).

=back

=head1 COST

What tracing costs depends on how many statements and calls a program
runs per second, not on how long it runs.  The numbers below come from
C<bench/run profiler> and C<bench/run instructions> in nytp's source, on
a 2-CPU virtual machine whose speed varied by up to 2 times within an
hour, so read them as a rough guide:

=over

=item *

Wall time: 1.3 to 1.7 times the unprofiled run on perltidy, 1.7 to 2.0
times on programs made of small subs and method calls (accessors, a
visitor, JSON::PP).  Devel::NYTProf took 11 to 19 times on the latter in
the same runs.

=item *

Per event, on the program's thread: 500 to 560 instructions per sub
call, with a clock reading as it returns (its start shares the reading
of its first statement; an xsub or a builtin reads the clock at its
start too), and 115 to 135 instructions per statement, with a clock
reading unless the statement is on the same line as the one before.

=item *

CPU time: the compressing thread adds about a quarter of the program's
own CPU time on call-heavy programs, on the machine's other CPU where
there is one.

=item *

File size: 1.15 to 1.6 times Devel::NYTProf's at the default level.
On the call-heavy programs C<NYTP_DEFLATE=zlib> made files 0.5 to 0.75
times its size, at 2 to 4 times the program's own CPU time spent
compressing (see C<compress>).
C<calls=0> halves the file and the compressing, and saves about 60
instructions a call, but leaves C<nytp calls> and C<nytp flame> nothing
to read.

=back

For a program that must run near full speed (a service under load), use
sampling instead: see L</SAMPLING>.

=head1 SAMPLING

With C<sample=HZ> the profiler does not trace: it samples.  A timer
raises a flag HZ times a second of the program's CPU time, and the
program, at its next statement,
sub call, return from a sub, or slow builtin, takes a sample: the file
and line it is on (C<PL_curcop>) and the subs on perl's context stack,
weighted by the wall time since the previous sample.

  NYTPROF=sample=1000 perl -d:NYTP script.pl
  nytp run --sample script.pl            # the same; --sample=100 for 100 Hz
  nytp top                               # "sampled at 1000 Hz, N samples"
  nytp run --sample --cpu script.pl      # samples weighed by CPU time

Wall or CPU time.  A sample weighs the time since the previous one on the
profiler's clock, by default the wall clock: code that waits (C<sleep>,
C<select>, a database call) is charged its waiting and ranks first, which
is what a user of the program waits for.  With C<clock=2> (CPU time of
the process; C<nytp run --sample --cpu> adds it) a sample weighs the CPU
time used since the previous one, so waiting costs next to nothing and
the ranking is of where the processor goes: the choice for a hot loop
hidden behind waits, and for comparing CPU cost between runs.  The clock
is read once a sample, not at every statement and call as when tracing
with C<clock=2>.  A sub that waited 0.5 s and one that computed for about
60 ms of CPU (on a machine at load 9): 505 ms and 135 ms sampled on the
wall clock, 0.23 ms and 57 ms with C<clock=2>.

The timer is a POSIX timer on the user CPU time of the program's thread
(Linux's per-thread user CPU clock; elsewhere its CPU clock), whose
signal handler only raises the flag, and perl's own flag of a pending
signal: perl then stops at its next safe point, where it would run a
C<%SIG> handler (the start of a statement, a loop's next round, a
condition), and the profiler takes the sample there, charged to the
statement that was running when the timer fired.  So statements cost
nothing more than without the profiler; only sub calls and returns and
the slow builtins test the flag themselves.  (An XS module that takes
perl's signal hook over without passing it on leaves samples to those
tests alone.)  There is no thread: every thread
of the process is the program's own, so a program that changes its ids
(C<POSIX::setuid>, C<$E<lt> = ...>) has them changed everywhere, and calls
that want one thread (see C<threads=0>) work.  The kernel looks at CPU
timers at its clock tick, and user CPU time grows only at a tick that
finds the program running its own code: the signal comes there and never
while the program waits in a system call, so its sleeps, C<select> and
other system calls are not cut short (no EINTR; the handler is installed
with SA_RESTART all the same), and a program that waits takes no samples
and costs nothing.  What the program waits for (a sleep, C<select>,
C<accept>, a database call in an xsub) or does in the kernel raises no
flag; so each slow builtin that can wait (I/O, sockets, processes, the
file system: not the regex, C<sort>, C<pack>, C<unpack> and C<crypt>
builtins, which only compute) and each xsub is timed, with the CPU's
time-stamp counter where it runs at a constant rate (its rate against
the profile's clock measured again at every sample of the timer; the
profile's clock itself with C<NYTP_TSC=0> or elsewhere), and one that
took a millisecond or more is charged that time as a sample of its own (the
builtin as C<Pkg::CORE:name>, an xsub's time its caller's), taken off the
next sample of the timer.  A shorter one is charged a millisecond with a
chance of its length in one (a wait of a tenth of a millisecond: one time
in ten), on average its own time.  The signal is
SIGURG (whose default action is to ignore it), or if the program handles,
ignores or blocks SIGURG when profiling starts, the highest real-time
signal it leaves alone.  A program that blocks it takes no samples while
it does; one that sets it to DEFAULT or to a handler of its own stops
the sampling at the next sample, with a warning (its handler may get the
few signals sent before then); fork and exec do not keep the timer.

Because the timer fires at most once a kernel tick, the rate is at most
the kernel's tick rate (CONFIG_HZ, often 250 or 1000; 250 on the machine
of C<bench/run service>): C<sample=1000> there takes about 250 samples a
second of CPU, and C<sample_count> says how many were taken.  Nothing
reads perl's stacks but the program's own thread, between two ops.

The rate: C<nytp run --sample> samples at 1000 Hz (the tick's rate, if
lower) for every program, long-running ones too, so that a program of a
few seconds gets some thousands of samples.  A long-running process (a
server) can take C<sample=100>, the rate py-spy uses: 360,000 samples an
hour of CPU, as many per request as a profile needs, a tenth of the
signals and a smaller profile.  Without a thread the rate hardly moves
the cost: a sample is a signal and a walk of what changed on the stack
(some microseconds), and a light request of a Starman worker took 0.46 %
more instructions than unprofiled at 1000 Hz, 0.33 % at 100 Hz and
0.57 % at 1 Hz (C<bench/run service_instr>: the lowest rate was not the
cheapest, so these differences are not the rate's).  What a sampled
program pays at any rate is the test of the flag
at each statement (some 5 instructions), call and return, and the timing
of xsubs and of the builtins that can wait (a read of the time-stamp
counter before and after, and the test of a short wait's chance: some 45
instructions an xsub call).  C<bench/run service> measures a server's throughput
and CPU time a request at both rates, unprofiled twice (A/A) beside
them; F<bench/README.md> has the figures and says how far the noise of
the machine they came from lets them go.
C<NYTP_SAMPLE_AT=op> in the
environment tests the flag after every op instead (perl's runops loop
replaced), which is more exact within a statement and costs more (a wait
in an xsub is then found at the next sample, not as the xsub returns).

The profile is an ordinary NYTProf file:

=over

=item lines

the sampled time of each line, as statement time (each written after a
DISCOUNT, so that no statement is counted);

=item subs

the exclusive and inclusive time of each sub from the stacks, the
caller and callee arcs (SUB_CALLERS) of each call site, and perl's slow
builtins as C<Pkg::CORE:name> subs, as a traced profile has them.  Xsubs
are not on perl's context stack: their time is their caller's;

=item call events

a SUB_RETURN when a sample finds a frame gone that the one before had
(its time since it was first seen): C<nytp flame>, C<nytp calls>,
C<nytp speedscope>, C<nytp pprof> and the flame graph of C<nytp html>
and nytprofhtml draw the sampled call tree;

=item attributes

C<sample_hz> (in the header and at the end) and C<sample_count> (at the
end).

=back

How often statements ran and subs were called is not known.  nytp's
reports say "sampled at HZ Hz, N samples" and show counts as C<?>
(C<null> in JSON, empty in CSV); C<nytp top --by=calls>,
C<nytp calls --calls> and C<nytp flame --calls> refuse a sampled profile.
In the file, a call arc counts the calls the sampler saw: a call is seen
when a sample finds its frame, and successive calls from one place that
no sample separates are seen as one, so the count is at most the real
one and usually much less.  Older readers that know nothing of sampling
(Devel::NYTProf::Data, nytprofhtml) open the file without complaint and
show these counts of calls seen as the number of calls and the sampled
times as they are; they count no statement (nytprofhtml's index says
"executing 0 statements", its line tables show 1 statement on each line
with time).

A sample is taken at the first check after the timer's signal, and its
weight is the wall time since the previous one less what waits were
charged meanwhile; a slow builtin or xsub is charged the time it took
(a short one, on average); so time in one long op (a regex match, a
blocking read, an xsub) is charged to where the program was during it,
and a program that works and waits in turn (a server: its requests, its
C<select>) gets each its share of the wall time (F<tests/43-sample.t>;
charging each wait with all the time since the last sample, as the timer
thread of earlier versions made it, gave the waits 65 to 76% of the time
where they took 46%).  Time outside any statement and any call (before the
program's first statement, and after its last: global destruction) is
charged to no line, as a traced profile charges it to none, so the line
times can add up to a little less than the time profiled.
C<bench/run sampling> measures the accuracy (a program
with known shares of the wall time, and perltidy against a traced
profile), C<bench/run profiler> the cost; F<bench/README.md> has the
figures.

Sampling goes with C<start>, C<DB::enable_profile>,
C<DB::disable_profile> and C<DB::finish_profile> (no samples while
disabled), C<forkdepth> and C<rotate>.  A forked child starts a timer of
its own and writes F<FILE.PID> as a traced child does.  C<calls=0> writes
no call events, C<stmts=0> no line times, C<subs=0> no subs.  It does not
go with C<use_db_sub> (ignored) or C<blocks>.  C<POSIX::_exit> is not seen
(nothing is traced): use C<posix_exit=1> to finish the profile there.
Unless C<savesrc> is given, the profile has the source of the string evals
that define subs, not that of files (see C<savesrc> above).

=head1 ROTATION

With C<rotate=SECONDS> the profile is closed every SECONDS as a complete
profile of that interval, and the profile goes on in the next file:
F<FILE>, F<FILE.s1>, F<FILE.s2>, ... where FILE is the name the process
writes to (F<FILE.PID> for a forked child, or with C<addpid=1>, whose
segments are then F<FILE.PID.s1>, ...; with C<addtimestamp=1> the time of
the first).  The C<s> keeps a segment's name apart from a child's
F<FILE.PID>: without C<addpid> the two would otherwise meet (pids are
small in a container), and one process would replace the other's file.

  nytp run --nytprof=rotate=60:addpid=1:sample=100 -o st.out -- \
      starman --listen 127.0.0.1:5000 app.psgi &
  kill -TERM $!; wait                    # later: stop it (nytp run waits
                                         # for the workers' profiles)
  nytp top st.out.*                      # every segment of every process

Each file has everything a reader needs, and nothing it would need from
an earlier one: the header and attributes (C<segment> N,
C<rotate_seconds> and C<run_id> among them), every file id again, its interval's
statements, sub calls, call arcs and call events, the line ranges of
all subs, and the source of the files it has data for.  A process killed
with C<kill -9> loses only the file it was writing (it is cut short:
readers keep what came before the cut); every file closed before reads
without a warning.  A run that ends sooner than an earlier one under the
same name leaves that run's later files in place: C<run_id>, one for a
run (the process and the children it forks), tells them apart, and every
nytp report given files of two runs among segments says so on standard
error.  A new file is written under a hidden name
(F<.FILE.sN.PID.partial>, with as much of F<FILE.sN> as fits in the
longest name the system allows) until its header is out, then renamed,
so that no F<FILE.sN> is ever empty.  A process killed in that moment
leaves its temporary behind: the next run of FILE removes those of
processes that are gone (a temporary is locked by its writer while it
lives; one of a pid that runs is left alone unless it is ten minutes
old), and nothing else.

The rule for what is in progress at a rotation:

=over

=item calls

A call in progress returns in the closing file, as if it ended there,
with the inclusive and exclusive time it had so far (its call arc counts
it, its SUB_RETURN is written), and goes on in the next file from zero.
So each file's call tree is complete, no time is lost or counted twice,
and a call that spans N files is counted once in each: summed over files
the times are exact and such a call is counted N times.  (The time the
profiler takes to write a file as it closes is its own: it is in no
file, as its other overhead is in none.)

=item statements

A rotation happens as a statement begins or a call ends, so no statement
is split but those that a call interrupted: the part before the rotation
is in the closing file, counted there; the rest, after the call returns,
goes to the next file without a count, as the rest of an interrupted
statement always is.

=back

A segment's size is mostly the source of the files it has data for: a
half-second segment of perltidy sampled at 100 Hz with C<savesrc=1> is
about 600 KB, nearly all of it the source of the Perl::Tidy modules, and
15 to 20 KB without (sampling's default; reports read the source from
disk).  Traced profiles save source by default: for a service rotating
every minute all day, C<savesrc=0> is worth considering.

Tracing with C<stmts=0> a file ends as a call ends; with C<stmts=0> and
C<subs=0> there is nothing to rotate at: C<rotate> is then ignored, with
a message.

The rotation happens at the first statement, end of a call (or sample)
after the interval has passed, whatever the program does: a loop on one
line rotates as any other (the profiler, which skips the clock for a
statement on the line of the last, reads it for each when rotating).  A
single statement that runs long with no call in it (a regular
expression) ends its file when it is done.  A process blocked in a system call (a server
waiting in C<accept>) closes its file when it runs perl code again, and
intervals it spent blocked are not files of their own.  With servers,
C<addpid=1> gives every process's files a name of its own from the
first (F<FILE.PID>, F<FILE.PID.s1>, ...).

=head1 RUN-TIME CONTROL

=over

=item DB::disable_profile()

Stop measuring (the file stays open).

=item DB::enable_profile([$file])

Start (again); with a file name different from the current one, the
current profile is finished and a new one begun.  (Traced, the new
profile also has the call arcs of the old one, as with Devel::NYTProf;
sampled, each has its own.)  Under C<nytp run> the new name is added to
the run's list (C<NYTP_RUN_FILES>), so that C<nytp run> names that
profile when the program ends.

=item DB::finish_profile()

Write the end of the profile and close it now (it is done automatically
after the last END block).  Calls still in progress (the subs that called
it) are left out of that profile, as at any end, and out of the next one
too: started with C<DB::enable_profile($file)>, it holds only the calls
made while it was open (Devel::NYTProf puts the calls that were open at
the finish into the next profile).  Called with no other call open (from
the main program, outside any sub), its own call is counted when it
returns, in the next profile, as Devel::NYTProf counts it.

=back

With C<start=no> and these, a long-running program can profile pieces of
its work apart, each into a complete profile of its own: a request, a
job.  L<Plack::Middleware::NYTP>, which comes with Devel::NYTP, does this
for the requests of a PSGI application (one in N, or those carrying a
header).


=head1 PROCESSES AND SIGNALS

A child made by C<fork> writes its own profile, F<FILE.PID>, from the
moment of the fork (up to C<forkdepth> generations).  A child whose
F<FILE.PID> cannot be made (a directory it may not write to once it has
dropped privileges, as C<starman --user nobody> does; a full disk; the
directory gone) runs on unprofiled, with one message: its C<fork> returns
as it would without the profiler.  C<exit> inside a sub
and C<die> still give a complete profile; C<exec> finishes the profile just
before the new program starts (if the exec fails, the program goes on
and so does its profile, in the next file of the name, F<FILE.sN>, as
rotation names it, with a message); C<POSIX::_exit> finishes it before the
process ends.  A signal that kills the process leaves a truncated profile
(readers keep what came before the cut) unless C<sigexit> names it.

A daemon that closes every file descriptor it did not open (as
L<Proc::Daemon> does) closes the profile's too, and the files it opens
next may get its number.  The profile's descriptor is kept at 100 or
above, and before each write Devel::NYTP checks that it is still the
profile's file: if not, it opens the file again by its name and goes on
where it was, and never writes to the program's file; if the file is gone
or another, the profile stops there with a message.  (Devel::NYTProf
writes its data into whatever file got the number.)

A program that handles a signal itself and exits from its handler (as
servers do with TERM: Starman's and every Net::Server worker's handler
calls C<exit>) ends normally, and its profile is finished by the last END
block.  But perl puts the default action back for every signal with a
C<%SIG> handler before it runs the END blocks, so a second signal in that
moment would kill the process before its profile is written: its
buffered data and its whole ending (subs, callers) lost.  That second
signal is what a service manager sends when it stops every process of a
service at once (systemd's default, or a kill of the process group, or
^C in a terminal), as the server's master signals its workers again.
So from the moment the process exits (perl's C<exit>, the END phase) and
while any profile is being finished (C<DB::finish_profile>, a new file
from C<DB::enable_profile>), the profiler holds HUP, INT, QUIT, TERM, USR1,
USR2 and ALRM: one that arrives is noted, and raised again once the
profile is complete, when it takes its course (in the END phase the
process dies of it; while the program runs, its handler gets it).  The
same signal sent a second time acts at once, so a program stuck in an END
block can still be stopped; a signal the program ignores stays ignored.

A server whose master (Net::Server's, so Starman's) sets TERM back to its
default action after it has signalled its workers, and is then sent TERM
again before it exits, dies of it there, with its own profile cut short:
that is the program's own doing, beyond the profiler's reach.  A service
stopped by signalling only its main process (systemd's
C<KillMode=mixed>) is sent TERM once.

=head1 THREADS

Only the interpreter that loaded Devel::NYTP is profiled; threads made
with L<threads> run unprofiled (as with Devel::NYTProf).

=head1 COROUTINES

Programs using L<Coro> are profiled (Devel::NYTProf 6 crashes on them
with a segmentation fault).  Every coroutine has perl stacks of its own,
and Devel::NYTP keeps one stack of calls in progress, so when C<cede>,
C<join>, a channel or a semaphore switches to another coroutine, the
calls in progress in the one left end, for the profile, at the first call
or return made after the switch: their counts are exact, and their
inclusive times run to the switch and a moment past it, not to their
real return.  Statement times are the time between statements, whichever
coroutine ran them.  With C<sample=HZ> each sample holds the stack of
the coroutine running at that moment.

One count is not exact: Coro's scheduling functions written in C
(C<cede>, C<schedule>, and the waits of its semaphores, signals and
channels) replace, at their first call, the op that called them with an
op of Coro's own, which perl then runs in place of the profiler's for
every later call from there.  Each of them is counted once per place in
the code that calls it, not once per call (the program's own subs, and
Coro's subs written in Perl, are counted per call).

=head1 ASYNC SUBS AND CUSTOM OPS

Modules that add syntax with ops of their own (custom ops) sometimes run
perl's ops from inside them.  Devel::NYTP's wrapper of each op runs the
op it was installed for, whatever op perl is at, so these work as
without the profiler: L<Syntax::Keyword::Try>, and L<Future::AsyncAwait>
(where Devel::NYTProf 6 aborts).  An async sub that awaits a future not
yet ready leaves perl's stacks and is called again, from where that
future is completed, to resume: the profile counts each resumption as a
call of the sub, from that place, and its time is the time it ran, not
the time it waited.

=head1 SEE ALSO

L<nytp(1)>, L<nytp-run(1)>, L<nytprof(5)>, L<Plack::Middleware::NYTP>,
L<Devel::NYTProf>.

=head1 LICENSE

Copyright (C) 2026 the nytp authors.  This library is free software; you
can redistribute it and/or modify it under the same terms as Perl itself
(the GNU General Public License, version 1 or later, or the Artistic
License).

=cut
