package Plack::Middleware::NYTP;
# Plack::Middleware::NYTP — profile single requests of a PSGI application
# with Devel::NYTP, each into a file of its own, through the profiler's
# run-time control (DB::enable_profile, DB::finish_profile).
use strict;
use warnings;
use parent 'Plack::Middleware';
use Plack::Util ();
use Plack::Util::Accessor qw(every header token dir);
use Time::HiRes ();
use POSIX ();
use Scalar::Util ();

our $VERSION = '0.1';

my $seen = 0;        # requests this process has seen
my $written = 0;     # profiles this process has started
my $count_pid = $$;  # a forked worker counts its own requests

sub prepare_app {
    my $self = shift;
    my $every = $self->every // 0;
    die "Plack::Middleware::NYTP: every must be a whole number (0: never), not '$every'\n"
        unless $every =~ /\A[0-9]+\z/;
    $self->every($every + 0);
    my $header = $self->header;
    die "Plack::Middleware::NYTP: give 'every' or 'header' (or both): nothing would be profiled\n"
        unless $self->every || (defined $header && length $header);
    if (defined $header) {
        die "Plack::Middleware::NYTP: '$header' is not a header name\n"
            unless $header =~ /\A[A-Za-z0-9!#\$%&'*+.^_`|~-]+\z/;
        (my $key = uc $header) =~ tr/-/_/;
        $self->{env_key} = $key =~ /\A(?:CONTENT_TYPE|CONTENT_LENGTH)\z/ ? $key : "HTTP_$key";
    }
    $self->dir('.') unless defined $self->dir && length $self->dir;
    $self->{usable} = $self->_profiler_usable && $self->_dir_usable;
    return;
}

# The directory is looked at once, at start: one that is missing or not
# writable is said once, not at every request chosen.
sub _dir_usable {
    my $self = shift;
    my $dir = $self->dir;
    return 1 if -d $dir && -w _ && -x _;
    warn "Plack::Middleware::NYTP: dir '$dir' is "
        . (-e $dir ? (-d _ ? 'not writable' : 'not a directory') : 'missing')
        . ": no request is profiled\n";
    return 0;
}

# The profiler must be loaded and idle: a process profiled as a whole
# (started without start=no) would have that profile cut into pieces.
sub _profiler_usable {
    my $self = shift;
    unless (defined &DB::enable_profile && defined &DB::finish_profile && defined &DB::disable_profile) {
        warn "Plack::Middleware::NYTP: the profiler is not loaded (run the server under "
            . "perl -d:NYTP with NYTPROF=start=no): no request is profiled\n";
        return 0;
    }
    if (DB::disable_profile()) {
        DB::enable_profile();
        warn "Plack::Middleware::NYTP: the whole process is being profiled (start it with "
            . "NYTPROF=start=no): no request is profiled apart\n";
        return 0;
    }
    return 1;
}

sub _wanted {
    my ($self, $env) = @_;
    if ($self->{env_key}) {
        my $v = $env->{ $self->{env_key} };
        if (defined $v && length $v && $v ne '0') {
            my $token = $self->token;
            return 1 if !defined $token || $v eq $token;
        }
    }
    my $every = $self->every;
    return $every && $seen % $every == 0;
}

# A name of safe characters only: letters, digits, '.', '_', '-'; no
# leading dot; at most $max bytes.
sub _safe {
    my ($s, $max, $empty) = @_;
    $s = '' unless defined $s;
    $s =~ s/[^A-Za-z0-9._-]+/_/g;
    $s =~ s/\A[._]+//;
    $s =~ s/_+\z//;
    $s = substr $s, 0, $max;
    return length $s ? $s : $empty;
}

# DIR/METHOD-PATH-TIME-PID-N.nytprof.out: the request's method and path
# (made safe), the time in UTC to the microsecond, and the process and its
# count of profiles, which make the name unique.
sub file_for {
    my ($self, $env) = @_;
    my ($secs, $usecs) = Time::HiRes::gettimeofday();
    my $when = POSIX::strftime('%Y%m%dT%H%M%S', gmtime $secs) . sprintf('.%06dZ', $usecs);
    (my $method = uc($env->{REQUEST_METHOD} // '')) =~ tr/A-Z//cd;
    $method = substr($method, 0, 16) || 'REQUEST';
    my $path = _safe(($env->{SCRIPT_NAME} // '') . ($env->{PATH_INFO} // ''), 100, 'root');
    return sprintf '%s/%s-%s-%s-%d-%d.nytprof.out', $self->dir, $method, $path, $when, $$, $written;
}

# The request being profiled in this process, if any (a weak reference:
# when the last of its callbacks is gone, so is it, and its profile is
# finished).  While it is in flight, no other request is profiled, and the
# profile is on only while its own code runs (see CAVEATS).
my $active;

sub call {
    my ($self, $env) = @_;
    if ($count_pid != $$) {
        ($seen, $written, $count_pid, $active) = (0, 0, $$, undef);
    }
    my $wanted = $self->{usable} && !$active && $self->_wanted($env);
    $seen++;
    unless ($wanted) {
        # served inside the profiled request's code (a server that runs
        # the loop from a writer): kept out of its profile
        return $self->app->($env) unless $active && $active->{on};
        return _unmeasured($self->app, $env);
    }
    $written++;
    my $file = $self->file_for($env);
    unless (eval { DB::enable_profile($file); 1 }) {
        # once per process (a worker that dropped its privileges, a full
        # disk, the directory gone): it stops trying
        warn "Plack::Middleware::NYTP: cannot profile into $file: $@"
            . "Plack::Middleware::NYTP: no more requests of process $$ are profiled\n";
        $self->{usable} = 0;
        return $self->app->($env);
    }
    my $req = bless { on => 1 }, 'Plack::Middleware::NYTP::Request';
    Scalar::Util::weaken($active = $req);
    $env->{'nytp.profile'} = $file;
    my $res = eval { $self->app->($env) };
    if (!defined $res && $@) {
        my $err = $@;
        $req->finish;
        die $err;
    }
    return $req->response($res);
}

sub _unmeasured {
    my ($code, @args) = @_;
    DB::disable_profile();
    my @r;
    my $ok = eval { @r = $code->(@args); 1 };
    my $err = $@;
    DB::enable_profile() if $active && $active->{on};
    die $err unless $ok;
    return wantarray ? @r : $r[-1];
}

package Plack::Middleware::NYTP::Request;
# One profiled request: its profile is on while its application call,
# its delayed response's callback, its responder and its writer run, off
# in between (where an event-loop server runs other requests' code), and
# finished when its response is complete, or when nothing can complete
# it any more (the responder or writer was dropped).

sub finish {
    my $self = shift;
    return if $self->{done}++;
    DB::finish_profile();    # on or off: the end is written, the file closed
    $self->{on} = 0;
    undef $active if $active && $active == $self;
    return;
}

sub off {
    my $self = shift;
    return if $self->{done} || !$self->{on};
    DB::disable_profile();
    $self->{on} = 0;
    return;
}

# Runs $code with this request's profile on (nested calls: already on).
sub measured {
    my ($self, $code, @args) = @_;
    return $code->(@args) if $self->{on} || $self->{done};
    DB::enable_profile();
    $self->{on} = 1;
    my @r;
    my $ok = eval { @r = $code->(@args); 1 };
    my $err = $@;
    $self->off;
    die $err unless $ok;
    return wantarray ? @r : $r[-1];
}

sub response {
    my ($self, $res) = @_;
    if (ref $res eq 'CODE') {
        $self->off;
        return sub {
            my $respond = shift;
            $self->measured($res, sub { $self->respond($respond, @_) });
            return;
        };
    }
    $self->finish;
    return $res;
}

sub respond {
    my ($self, $respond, $r) = @_;
    if (ref $r eq 'ARRAY' && @$r >= 3) {
        $self->finish;
        return $respond->($r);
    }
    my $writer = $self->measured($respond, $r);
    return $writer unless $writer;
    return bless { req => $self, writer => $writer }, 'Plack::Middleware::NYTP::Writer';
}

sub DESTROY {
    my $self = shift;
    $self->finish unless ${^GLOBAL_PHASE} eq 'DESTRUCT';
}

package Plack::Middleware::NYTP::Writer;
# The server's writer, with the request's profile on while it runs and
# finished when it closes (or is dropped unclosed).

sub write {
    my $self = shift;
    return $self->{req}->measured(sub { $self->{writer}->write(@_) }, @_);
}

sub close {
    my $self = shift;
    $self->{req}->finish;
    return $self->{writer}->close;
}

# (the server keeps the callback: a weak reference back, no cycle)
sub poll_cb {
    my ($self, $cb) = @_;
    Scalar::Util::weaken(my $weak = $self);
    return $self->{writer}->poll_cb(sub { $weak ? $weak->{req}->measured($cb, $weak) : $cb->(@_) });
}

sub DESTROY {
    my $self = shift;
    $self->{req}->finish if $self->{req} && ${^GLOBAL_PHASE} ne 'DESTRUCT';
}

package Plack::Middleware::NYTP;

1;

__END__

=head1 NAME

Plack::Middleware::NYTP - profile single requests of a PSGI application with Devel::NYTP

=head1 SYNOPSIS

  # app.psgi
  use Plack::Builder;
  my $app = sub { ... };
  builder {
      enable 'NYTP', every => 1000, dir => '/var/tmp/nytp';
      $app;
  };

  # the directory of the profiles must be there
  mkdir -p /var/tmp/nytp
  # run the server under the profiler, with profiling off until a
  # request asks for it; either
  NYTPROF=start=no PERL5OPT=-d:NYTP starman --workers 4 --listen 127.0.0.1:5000 app.psgi &
  # or
  nytp run --nytprof=start=no -- starman --workers 4 --listen 127.0.0.1:5000 app.psgi &

  # each profiled request leaves a file of its own, such as
  # GET-api_users_42-20261126T181230.123456Z-4101-1.nytprof.out
  curl http://127.0.0.1:5000/api/users/42
  ls /var/tmp/nytp
  nytp top /var/tmp/nytp/GET-api_users_42-*.nytprof.out

=head1 DESCRIPTION

This middleware profiles some requests of a PSGI application, each into a
profile of its own, with L<Devel::NYTP> (nytp's profiler; Devel::NYTProf
offers the same run-time control and works too).  The server runs under
the profiler with profiling off (the profiler option C<start=no>); for a
request chosen to be profiled the middleware calls
C<DB::enable_profile(FILE)> before handing it to the application and
C<DB::finish_profile()> once the response is complete: when the
application returns a whole body, or, for a streamed response, when it
closes its writer.  Between requests nothing is measured, so the requests
not chosen run at nearly full speed.

Each file is a complete profile of that request, which every nytp command
and Devel::NYTProf's tools read: the statements, the subs, their callers,
the call events of the request.  Files are named after the request:

  DIR/METHOD-PATH-TIME-PID-N.nytprof.out

the method (letters only), the path (C<SCRIPT_NAME> and C<PATH_INFO>, every
run of characters other than letters, digits, C<.>, C<_> and C<->
replaced by one C<_>, no leading dot, at most 100 bytes, C<root> for C</>),
the time in UTC to the microsecond, the process id and the count of
profiles of that process.  The name is also put in the request's
environment as C<nytp.profile>.  Profiles of many requests add up: C<nytp
top DIR/GET-api_users-*> or C<nytp html -o report DIR/*.nytprof.out>.

=head1 OPTIONS

=over

=item every => N

Profile one request in N, counted in each process (each forked worker
counts its own requests, the first of each N being profiled).  0 (the
default) profiles none that way.

=item header => NAME

Profile every request that carries this header with a value other than
empty or C<0> (for example C<X-NYTP-Profile: 1>).  Anyone who can reach the
server can send a header: give C<token> as well, or have the proxy in
front drop the header from outside requests.

=item token => STRING

With C<header>: profile only requests whose header value is exactly
STRING.

=item dir => DIR

Where the profiles go (default: the working directory of the server).  It
must exist and be writable when the application is prepared: if not, that
is said once and no request is profiled.  When a profile cannot be opened
later (a worker that dropped its privileges, a full disk, the directory
removed), the request is served unprofiled, with one warning, and that
process profiles no more requests.

=back

At least one of C<every> and C<header> must be given.

=head1 CAVEATS

The server must run under the profiler with C<start=no>: without it the
profiler measures the whole process into one file, and the middleware
leaves the requests alone (it says so once, as it does when the profiler
is not loaded at all).

A request is profiled from the moment the middleware passes it on: the
middlewares wrapped around this one and the server's own work for the
request are not in its profile; put C<enable 'NYTP'> first in the builder
to have all the middlewares in.

One request at a time per process: a profile never holds two requests'
work.  While a profiled request is in flight (its response delayed or
streamed), a request that arrives in the same process is served
unprofiled, whatever C<every> or C<header> say (with C<every> it still
counts as seen).  And the profile is on only while the request's own code
that the middleware sees runs: the application call, the callback of a
delayed response, the responder and the writer's C<write> and C<poll_cb>
callbacks; off in between, where an event-loop server (Twiggy, Feersum,
Corona) runs other requests' code.  With a server that runs a delayed
response's callback at once (starman, Plack::Test, any preforking
server), that is the whole request; in an event-loop server, what the
application does in its own timers and I/O watchers is not in the
profile.  A response is complete when a whole body is returned or its
writer closed; a responder or writer dropped unused finishes the profile
too, and the next request can be profiled.

With the profiler's default C<savesrc=1> every profile also holds the
source of every file perl kept it for; C<NYTPROF=start=no:savesrc=0>
makes small files (the reports read the source from the files then).

=head1 EXAMPLE: STARMAN

  # app.psgi: a profile of every request with "X-NYTP-Profile: s3cret",
  # and of one request in 500 of each worker
  use Plack::Builder;
  my $app = MyApp->to_app;
  builder {
      enable 'NYTP', every => 500, header => 'X-NYTP-Profile',
          token => 's3cret', dir => '/var/tmp/nytp';
      $app;
  };

  mkdir -p /var/tmp/nytp
  nytp run --nytprof=start=no:savesrc=0 -- \
      starman --workers 4 --listen 127.0.0.1:5000 app.psgi &
  curl -H 'X-NYTP-Profile: s3cret' http://127.0.0.1:5000/api/users/42
  nytp top /var/tmp/nytp/GET-api_users_42-*
  nytp html -o /var/tmp/nytp-report /var/tmp/nytp/*.nytprof.out

=head1 SEE ALSO

L<Devel::NYTP>, L<nytp-run(1)>, L<nytp(1)>, L<Plack::Middleware>.

=head1 LICENSE

Copyright (C) 2026 the nytp authors.  This library is free software; you
can redistribute it and/or modify it under the same terms as Perl itself
(the GNU General Public License, version 1 or later, or the Artistic
License).

=cut
