# OO workload for bench_profiler: a tree of small objects walked by a
# visitor, every field read through a plain-perl accessor and every step
# a method call (the code of modern Perl classes, without a framework).
use strict;
use warnings;

package Shape;
sub new { my ($class, %a) = @_; return bless {%a}, $class }
sub name { $_[0]{name} }
sub x { $_[0]{x} }
sub y { $_[0]{y} }
sub children { $_[0]{children} }
sub set_x { $_[0]{x} = $_[1]; return $_[0] }
sub accept { my ($self, $v) = @_; my $m = $self->visit_method; return $v->$m($self) }

package Circle;
our @ISA = ('Shape');
sub r { $_[0]{r} }
sub visit_method { 'visit_circle' }
sub area { my $s = shift; return 3.14159 * $s->r * $s->r }

package Rect;
our @ISA = ('Shape');
sub w { $_[0]{w} }
sub h { $_[0]{h} }
sub visit_method { 'visit_rect' }
sub area { my $s = shift; return $s->w * $s->h }

package Group;
our @ISA = ('Shape');
sub visit_method { 'visit_group' }
sub area { my $s = shift; my $t = 0; $t += $_->area for @{ $s->children }; return $t }

package Visitor;
sub new { return bless { area => 0, count => 0, depth => 0, max => 0 }, shift }
sub count { $_[0]{count} }
sub area { $_[0]{area} }
sub add_area { $_[0]{area} += $_[1] }
sub bump { $_[0]{count}++ }
sub visit_circle { my ($v, $c) = @_; $v->bump; $v->add_area($c->area); return $c->x + $c->y }
sub visit_rect { my ($v, $r) = @_; $v->bump; $v->add_area($r->area); return $r->x - $r->y }
sub visit_group {
    my ($v, $g) = @_;
    $v->bump;
    my $sum = 0;
    $sum += $_->accept($v) for @{ $g->children };
    return $sum;
}

package main;

my $id = 0;
sub build {
    my ($depth) = @_;
    return Group->new(name => 'g' . $id++, x => $depth, y => 0,
        children => [map { build($depth - 1) } 1 .. 4])
        if $depth > 0;
    return ($id++ % 2)
        ? Circle->new(name => "c$id", x => $id % 7, y => $id % 5, r => $id % 3 + 1)
        : Rect->new(name => "r$id", x => $id % 11, y => $id % 3, w => 2, h => $id % 4 + 1);
}

# NYTP_BENCH_SCALE=N (bench/run instructions) does about 1/N of the rounds
my $scale = $ENV{NYTP_BENCH_SCALE} || 1;
my $tree = build(5);  # 1,365 shapes
my $total = 0;
for my $round (1 .. int(150 / $scale)) {
    my $v = Visitor->new;
    $total += $tree->accept($v);
    $total += $v->count + int $v->area;
    $_->set_x($_->x + 1) for @{ $tree->children };
}
print "$total\n";
