% Continuous shortest paths over a stream of arcs (Zaniolo, "A Logic-Based Language for Data Streams").
% arc(T,X,Y,D): at timestamp T an arc X -> Y of length D arrives.
% lgr(T1,T2,T) is the built-in T = max(T1,T2): a new path joins an earlier one in either order.
% On a graph with cycles paths grow without end: maxlen bounds their length.
#const maxlen = 20.
path(T,X,Y,D) :- arc(T,X,Y,D).
path(T,X,Z,D) :- path(T1,X,Y,D1), path(T2,Y,Z,D2), lgr(T1,T2,T), D = D1+D2, D <= maxlen.
shorter(T,X,Z,D) :- path(T,X,Z,D), path(T1,X,Z,D1), T1 <= T, D1 < D.
minpath(T,X,Z,D) :- path(T,X,Z,D), not shorter(T,X,Z,D).
#show minpath/4.
