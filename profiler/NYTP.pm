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
my %sigexit_handler;
if (defined(my $spec = $ENV{NYTPROF})) {
    for my $item ($spec =~ /((?:[^\\:]|\\.)+)/gs) {
        my ($opt, $val) = $item =~ /\A((?:[^\\=]|\\.)+)=((?:[^\\=]|\\.)+)\z/s
            or die "Devel::NYTP: bad NYTPROF option '$item' (want name=value)\n";
        s/\\(.)/$1/gs for $opt, $val;
        if ($opt eq 'sigexit') {
            # these signals end the program with a complete profile; 1 adds
            # TERM to Devel::NYTProf's list; 0 (a later sigexit=0 too)
            # takes back any handler an earlier sigexit put in place
            if ($val eq '0') {
                $SIG{$_} = 'DEFAULT' for keys %sigexit_handler;
                %sigexit_handler = ();
                next;
            }
            my @sigs = $val eq '1' ? qw(INT HUP TERM PIPE BUS SEGV) : split /,/, $val;
            for my $sig (map { uc } @sigs) {
                # the profile finished, the program dies of the signal as
                # it would have (its parent, a shell or nytp run, sees
                # which); exit 1 only if the signal does not kill it
                $SIG{$sig} = $sigexit_handler{$sig} = sub {
                    $finish_profile->();
                    $SIG{$sig} = 'DEFAULT';
                    kill $sig, $$;
                    exit 1;
                };
            }
            next;
        }
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
is written as the attribute C<inc>, its directories joined with C<:>
(hooks, and directories whose names hold a C<:> or a newline, left out):
C<nytp diff> makes file names relative to them, so that two checkouts of
a program compare.

=back

=head1 OPTIONS

Options are read from the C<NYTPROF> environment variable, as
C<name=value> pairs separated by colons; a backslash escapes the next
character (C<file=C\:\\x.out>).  An unknown option is an error before the
program runs.

=over

=item file=PATH

The profile (default F<./nytprof.out>).  A regular file is replaced, not
appended to.  A device, a FIFO or a symbolic link (and the file it leads
to) is written through, never replaced.  A path that cannot be written is
an error before the program runs.

=item addpid=1, addtimestamp=1

Append C<.PID> and/or C<.TIME> (epoch seconds) to the file name.

=item compress=N

Compression level 0 to 9 (default 6); 0 writes an uncompressed file.  The
compressing is done on a writer thread of its own (NYTP_THREADS=0: on the
program's thread), so the program waits only when that thread falls
behind.  In builds with Intel ISA-L (C<libisal-dev>) ISA-L deflates the
stream: levels 1, 2-6 and 7-9 become ISA-L's 1, 2 and 3; the default takes
a small part of the CPU time of zlib's level 6 for a file about 40%
larger (compress=7 to 9: smaller, at more CPU time).  NYTP_DEFLATE=zlib in the environment chooses zlib (the file
Devel::NYTProf would write at that level); either way the file is an
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
gives C<sigexit=INT,HUP,TERM> unless the options name C<sigexit>).  The
handlers are ordinary C<%SIG> handlers, set as the profiler loads: a
program that sets its own handler for a signal replaces them (see
L</PROCESSES AND SIGNALS>), and like every C<%SIG> handler they run
between perl's operations, so a signal that arrives during a long call
into C code waits for it to return.  KILL and STOP cannot be caught: a
program killed with C<kill -9> leaves a profile cut where the signal
struck (readers keep what came before the cut).

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

Messages of the profiler about itself: with C<trace=1> start-up, start
and stop, files opened and closed, forks; C<trace=2> adds every new file
id.  They go to standard error, or are appended to FILE with C<log>.
(The messages are not those of Devel::NYTProf.)

=item usecputime=1

Removed, as from Devel::NYTProf 6: with it the profiler says so on
standard error (once) and does not profile at all; no profile is written
and the program runs unprofiled.  To measure CPU time instead of wall
time choose the clock: C<clock=2> is C<CLOCK_PROCESS_CPUTIME_ID> on Linux
(see C<clock=N>).

=back

=head1 RUN-TIME CONTROL

=over

=item DB::disable_profile()

Stop measuring (the file stays open).

=item DB::enable_profile([$file])

Start (again); with a file name different from the current one, the
current profile is finished and a new one begun.

=item DB::finish_profile()

Write the end of the profile and close it now (it is done automatically
after the last END block).  Calls still in progress (the subs that called
it) are left out of that profile, as at any end, and out of the next one
too: started with C<DB::enable_profile($file)>, it holds only the calls
made while it was open (Devel::NYTProf puts the calls that were open at
the finish into the next profile).

=back

With C<start=no> and these, a long-running program can profile pieces of
its work apart, each into a complete profile of its own: a request, a
job.  L<Plack::Middleware::NYTP>, which comes with Devel::NYTP, does this
for the requests of a PSGI application (one in N, or those carrying a
header).


=head1 PROCESSES AND SIGNALS

A child made by C<fork> writes its own profile, F<FILE.PID>, from the
moment of the fork (up to C<forkdepth> generations).  C<exit> inside a sub
and C<die> still give a complete profile; C<exec> finishes the profile just
before the new program starts; C<POSIX::_exit> finishes it before the
process ends.  A signal that kills the process leaves a truncated profile
(readers keep what came before the cut) unless C<sigexit> names it.

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

=head1 SEE ALSO

L<nytp(1)>, L<nytp-run(1)>, L<nytprof(5)>, L<Plack::Middleware::NYTP>,
L<Devel::NYTProf>.

=head1 LICENSE

Copyright (C) 2026 the nytp authors.  This library is free software; you
can redistribute it and/or modify it under the same terms as Perl itself
(the GNU General Public License, version 1 or later, or the Artistic
License).

=cut
