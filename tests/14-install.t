#!/usr/bin/perl
# 'make install DESTDIR=... PREFIX=/usr' puts everything where it belongs:
# the command, man pages (Devel::NYTP's and Plack::Middleware::NYTP's as
# section 3pm), the modules, completions, the
# library with its headers and pkg-config file, the license; a program
# builds against the installed library through pkg-config and reads a
# profile.  And 'nytp help nytprof' shows the file format's page.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $root = repo();
my $dir = scratch_dir();
my $dest = "$dir/dest";

my ($st, $out, $err) = run_cmd(['make', '-C', $root, '--no-print-directory', 'install',
                                "DESTDIR=$dest", 'PREFIX=/usr']);
is $st, 0, 'make install DESTDIR PREFIX=/usr: exit 0' or diag $err;
for my $f (qw(bin/nytp lib/libnytpformat.a include/nytp/nytp.h include/nytp/model.h
              include/nytp/reader.h lib/pkgconfig/nytpformat.pc share/man/man1/nytp.1
              share/man/man5/nytprof.5 share/man/man3/Devel::NYTP.3pm
              share/man/man3/Plack::Middleware::NYTP.3pm share/doc/nytp/LICENSE
              share/bash-completion/completions/nytp share/zsh/site-functions/_nytp)) {
    ok -f "$dest/usr/$f", "installed: /usr/$f";
}
my @headers = map { s{.*/}{}r } glob("$root/libformat/include/nytp/*.h");
ok((!grep { !-f "$dest/usr/include/nytp/$_" } @headers), 'every public header is installed');

# The module's manual page, made from its POD.
{
    local $ENV{MANWIDTH} = 80;
    ($st, $out) = run_cmd(['man', '-l', "$dest/usr/share/man/man3/Devel::NYTP.3pm"]);
    is $st, 0, 'man -l Devel::NYTP.3pm: exit 0';
    like $out, qr/Devel::NYTP\s+-\s+a statement and subroutine profiler/, '... its NAME';
    like $out, qr/same\s+terms\s+as\s+Perl\s+itself/, '... and its license';
}

# The profiler and Plack::Middleware::NYTP in perl's site arch directory
# under the prefix; the middleware's manual page.
{
    my ($arch) = (run_cmd([$^X, '-MConfig', '-e',
        '($_ = $Config{installsitearch}) =~ s{^\Q$Config{siteprefix}\E/?}{}; print']))[1];
    ok -f "$dest/usr/$arch/Devel/NYTP.pm", "installed: /usr/$arch/Devel/NYTP.pm";
    ok -f "$dest/usr/$arch/Plack/Middleware/NYTP.pm", "installed: /usr/$arch/Plack/Middleware/NYTP.pm";
    local $ENV{MANWIDTH} = 80;
    ($st, $out) = run_cmd(['man', '-l', "$dest/usr/share/man/man3/Plack::Middleware::NYTP.3pm"]);
    like $out, qr/Plack::Middleware::NYTP\s+-\s+profile single requests/, 'man -l Plack::Middleware::NYTP.3pm: its NAME';
}

# pkg-config, with the installed tree as the system root.
SKIP: {
    skip 'pkg-config is missing', 6 if missing((grep { -x "$_/pkg-config" } split /:/, $ENV{PATH}), 'pkg-config');
    local $ENV{PKG_CONFIG_PATH} = "$dest/usr/lib/pkgconfig";
    local $ENV{PKG_CONFIG_SYSROOT_DIR} = $dest;
    ($st, $out, $err) = run_cmd(['pkg-config', '--cflags', '--libs', 'nytpformat']);
    is $st, 0, 'pkg-config --cflags --libs nytpformat: exit 0' or diag $err;
    like $out, qr{-I\Q$dest\E/usr/include\b}, '... the installed headers';
    like $out, qr{-L\Q$dest\E/usr/lib\b.*-lnytpformat}, '... the installed library';
    ($st, my $ver) = run_cmd(['pkg-config', '--modversion', 'nytpformat']);
    my ($want) = (run_cmd([$nytp, '--version']))[1] =~ /^nytp (\S+)/;
    is $ver, "$want\n", 'its version is the command\'s';

    # a tiny program: count the chunks of a profile, as 'nytp dump' prints them
    open my $c, '>', "$dir/count.c" or die;
    print $c <<'C';
#include <stdio.h>
#include <nytp/reader.h>

int main(int argc, char **argv)
{
    nytp_reader *r;
    nytp_chunk c;
    nytp_error e = {0};
    unsigned long n = 0;
    int st;
    if (argc < 2 || nytp_reader_open(&r, argv[1], &e) < 0)
        return 1;
    while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK)
        n++;
    nytp_reader_close(r);
    printf("%lu\n", n);
    return st == NYTP_END ? 0 : 1;
}
C
    close $c;
    my @flags = split ' ', $out;
    ($st, undef, $err) = run_cmd(['cc', '-std=c11', '-Wall', '-Werror', '-o', "$dir/count",
                                  "$dir/count.c", @flags]);
    is $st, 0, 'a program builds against the installed library' or diag $err;
    my $demo = testdata() . '/demo.out';
    ($st, $out) = run_cmd(["$dir/count", $demo]);
    my (undef, $dump) = run_cmd([$nytp, 'dump', $demo]);
    is $out, scalar(() = $dump =~ /\n/g) . "\n", '... and reads every chunk of a profile';
}

# nytp help nytprof: the format's page, nytprof(5).
{
    local $ENV{MANPAGER} = 'cat';
    local $ENV{PAGER} = 'cat';
    ($st, $out, $err) = run_cmd([$nytp, 'help', 'nytprof']);
    is $st, 0, 'nytp help nytprof: exit 0' or diag $err;
    like $out, qr/NYTPROF\(5\)/, '... shows nytprof(5)';
    ($st, $out, $err) = run_cmd(["$dest/usr/bin/nytp", 'help', 'nytprof']);
    like $out, qr/NYTPROF\(5\)/, '... from the installed tree too (share/man/man5)';
}

done_testing;
