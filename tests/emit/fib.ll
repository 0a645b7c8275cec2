; emit-llvm small.ms fib int
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define internal fastcc { i1, i64 } @m0.fib.0(ptr %0, i32 %1, i64 %2) unnamed_addr {
entry:
  %vals32.i34 = alloca [1 x [2 x i64]], align 16
  %vals25.i35 = alloca [1 x [2 x i64]], align 16
  %vals24.i36 = alloca [2 x [2 x i64]], align 16
  %vals32.i = alloca [1 x [2 x i64]], align 16
  %vals25.i = alloca [1 x [2 x i64]], align 16
  %vals24.i = alloca [2 x [2 x i64]], align 16
  %vals32 = alloca [1 x [2 x i64]], align 16
  %vals25 = alloca [1 x [2 x i64]], align 16
  %vals24 = alloca [2 x [2 x i64]], align 16
  %vm = load ptr, ptr %0, align 8
  %3 = icmp slt i64 %2, 2
  br i1 %3, label %then, label %fast

common.ret:                                       ; preds = %join33, %badtype31, %fail27, %fail21, %fail6, %stop, %then
  %common.ret.op = phi { i1, i64 } [ %4, %then ], [ zeroinitializer, %stop ], [ zeroinitializer, %fail6 ], [ zeroinitializer, %fail21 ], [ zeroinitializer, %fail27 ], [ zeroinitializer, %badtype31 ], [ %111, %join33 ]
  ret { i1, i64 } %common.ret.op

then:                                             ; preds = %entry
  %4 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %2, 1
  br label %common.ret

fast:                                             ; preds = %entry
  %5 = add nsw i64 %2, -1
  %6 = add i32 %1, 1
  %7 = getelementptr i8, ptr %vm, i64 268
  %max = load i32, ptr %7, align 4
  %8 = getelementptr i8, ptr %vm, i64 272
  %limit = load i64, ptr %8, align 4
  %sp = tail call ptr @llvm.stacksave.p0()
  %9 = ptrtoint ptr %sp to i64
  %10 = icmp ugt i64 %limit, %9
  %11 = getelementptr i8, ptr %vm, i64 280
  %interrupt = load volatile i32, ptr %11, align 4
  %12 = getelementptr i8, ptr %vm, i64 288
  %deadline = load double, ptr %12, align 8
  %13 = fcmp ogt double %deadline, 0.000000e+00
  %14 = icmp ne i32 %interrupt, 0
  %15 = or i1 %14, %13
  %16 = icmp sle i32 %max, %1
  %17 = or i1 %16, %10
  %18 = or i1 %17, %15
  br i1 %18, label %slow3, label %go

slow3:                                            ; preds = %fast
  %19 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %19, align 4
  %20 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %20, label %go, label %stop

go:                                               ; preds = %slow3, %fast
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals32.i34)
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals25.i35)
  call void @llvm.lifetime.start.p0(i64 32, ptr nonnull %vals24.i36)
  %vm.i37 = load ptr, ptr %0, align 8
  %21 = icmp eq i64 %2, 2
  br i1 %21, label %then.i62, label %fast.i38

then.i62:                                         ; preds = %go
  %22 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %5, 1
  br label %m0.fib.twin.1.exit63

fast.i38:                                         ; preds = %go
  %23 = add nsw i64 %2, -2
  %24 = add i32 %1, 2
  %25 = getelementptr i8, ptr %vm.i37, i64 268
  %max.i39 = load i32, ptr %25, align 4
  %26 = getelementptr i8, ptr %vm.i37, i64 272
  %limit.i40 = load i64, ptr %26, align 4
  %sp.i41 = tail call ptr @llvm.stacksave.p0()
  %27 = ptrtoint ptr %sp.i41 to i64
  %28 = icmp ugt i64 %limit.i40, %27
  %29 = getelementptr i8, ptr %vm.i37, i64 280
  %interrupt.i42 = load volatile i32, ptr %29, align 4
  %30 = getelementptr i8, ptr %vm.i37, i64 288
  %deadline.i43 = load double, ptr %30, align 8
  %31 = fcmp ogt double %deadline.i43, 0.000000e+00
  %32 = icmp ne i32 %interrupt.i42, 0
  %33 = or i1 %32, %31
  %34 = icmp sle i32 %max.i39, %6
  %35 = or i1 %34, %28
  %36 = or i1 %35, %33
  br i1 %36, label %slow3.i60, label %go.i44

slow3.i60:                                        ; preds = %fast.i38
  %37 = getelementptr i8, ptr %vm.i37, i64 264
  store i32 %6, ptr %37, align 4
  %38 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %38, label %go.i44, label %stop.i61

go.i44:                                           ; preds = %slow3.i60, %fast.i38
  %39 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %24, i64 %23)
  %ok4.i45 = extractvalue { i1, i64 } %39, 0
  br i1 %ok4.i45, label %ok5.i48, label %fail6.i46

stop.i61:                                         ; preds = %slow3.i60
  tail call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit63

ok5.i48:                                          ; preds = %go.i44
  %40 = extractvalue { i1, i64 } %39, 1
  %41 = add nsw i64 %2, -3
  %42 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %24, i64 %41)
  %ok19.i49 = extractvalue { i1, i64 } %42, 0
  br i1 %ok19.i49, label %ok20.i51, label %fail21.i50

fail6.i46:                                        ; preds = %go.i44
  tail call void @mist_rt_fail(ptr nonnull %0, i32 16)
  br label %m0.fib.twin.1.exit63

ok20.i51:                                         ; preds = %ok5.i48
  %43 = extractvalue { i1, i64 } %42, 1
  %44 = tail call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %40, i64 %43)
  %45 = extractvalue { i64, i1 } %44, 1
  br i1 %45, label %slow23.i54, label %fast22.i52

fail21.i50:                                       ; preds = %ok5.i48
  tail call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit63

fast22.i52:                                       ; preds = %ok20.i51
  %46 = extractvalue { i64, i1 } %44, 0
  br label %join33.i53

slow23.i54:                                       ; preds = %ok20.i51
  store i64 3, ptr %vals24.i36, align 16
  %47 = getelementptr inbounds i8, ptr %vals24.i36, i64 8
  store i64 %40, ptr %47, align 8
  %48 = getelementptr inbounds i8, ptr %vals24.i36, i64 16
  store i64 3, ptr %48, align 16
  %49 = getelementptr inbounds i8, ptr %vals24.i36, i64 24
  store i64 %43, ptr %49, align 8
  %50 = getelementptr i8, ptr %vm.i37, i64 264
  store i32 %6, ptr %50, align 4
  %51 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals24.i36, ptr nonnull %vals25.i35)
  br i1 %51, label %ok26.i56, label %fail27.i55

ok26.i56:                                         ; preds = %slow23.i54
  %tag28.i57 = load i64, ptr %vals25.i35, align 16
  %52 = getelementptr inbounds i8, ptr %vals25.i35, i64 8
  %pay29.i58 = load i64, ptr %52, align 8
  %53 = icmp eq i64 %tag28.i57, 3
  br i1 %53, label %join33.i53, label %badtype31.i59

fail27.i55:                                       ; preds = %slow23.i54
  call void @mist_rt_fail(ptr nonnull %0, i32 21)
  br label %m0.fib.twin.1.exit63

badtype31.i59:                                    ; preds = %ok26.i56
  store i64 %tag28.i57, ptr %vals32.i34, align 16
  %54 = getelementptr inbounds i8, ptr %vals32.i34, i64 8
  store i64 %pay29.i58, ptr %54, align 8
  %55 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32.i34, i32 22)
  call void @mist_rt_fail(ptr nonnull %0, i32 23)
  br label %m0.fib.twin.1.exit63

join33.i53:                                       ; preds = %ok26.i56, %fast22.i52
  %56 = phi i64 [ %46, %fast22.i52 ], [ %pay29.i58, %ok26.i56 ]
  %57 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %56, 1
  br label %m0.fib.twin.1.exit63

m0.fib.twin.1.exit63:                             ; preds = %then.i62, %stop.i61, %fail6.i46, %fail21.i50, %fail27.i55, %badtype31.i59, %join33.i53
  %common.ret.op.i47 = phi { i1, i64 } [ %22, %then.i62 ], [ zeroinitializer, %stop.i61 ], [ zeroinitializer, %fail6.i46 ], [ zeroinitializer, %fail21.i50 ], [ zeroinitializer, %fail27.i55 ], [ zeroinitializer, %badtype31.i59 ], [ %57, %join33.i53 ]
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals32.i34)
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals25.i35)
  call void @llvm.lifetime.end.p0(i64 32, ptr nonnull %vals24.i36)
  %ok4 = extractvalue { i1, i64 } %common.ret.op.i47, 0
  br i1 %ok4, label %ok5, label %fail6

stop:                                             ; preds = %slow3
  tail call void @mist_rt_fail(ptr nonnull %0, i32 3)
  br label %common.ret

ok5:                                              ; preds = %m0.fib.twin.1.exit63
  %58 = extractvalue { i1, i64 } %common.ret.op.i47, 1
  %59 = add nsw i64 %2, -2
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals32.i)
  call void @llvm.lifetime.start.p0(i64 16, ptr nonnull %vals25.i)
  call void @llvm.lifetime.start.p0(i64 32, ptr nonnull %vals24.i)
  %vm.i = load ptr, ptr %0, align 8
  %60 = icmp ult i64 %59, 2
  br i1 %60, label %then.i, label %fast.i

then.i:                                           ; preds = %ok5
  %61 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %59, 1
  br label %m0.fib.twin.1.exit

fast.i:                                           ; preds = %ok5
  %62 = add nsw i64 %2, -3
  %63 = add i32 %1, 2
  %64 = getelementptr i8, ptr %vm.i, i64 268
  %max.i = load i32, ptr %64, align 4
  %65 = getelementptr i8, ptr %vm.i, i64 272
  %limit.i = load i64, ptr %65, align 4
  %sp.i = call ptr @llvm.stacksave.p0()
  %66 = ptrtoint ptr %sp.i to i64
  %67 = icmp ugt i64 %limit.i, %66
  %68 = getelementptr i8, ptr %vm.i, i64 280
  %interrupt.i = load volatile i32, ptr %68, align 4
  %69 = getelementptr i8, ptr %vm.i, i64 288
  %deadline.i = load double, ptr %69, align 8
  %70 = fcmp ogt double %deadline.i, 0.000000e+00
  %71 = icmp ne i32 %interrupt.i, 0
  %72 = or i1 %71, %70
  %73 = icmp sle i32 %max.i, %6
  %74 = or i1 %73, %67
  %75 = or i1 %74, %72
  br i1 %75, label %slow3.i, label %go.i

slow3.i:                                          ; preds = %fast.i
  %76 = getelementptr i8, ptr %vm.i, i64 264
  store i32 %6, ptr %76, align 4
  %77 = call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %77, label %go.i, label %stop.i

go.i:                                             ; preds = %slow3.i, %fast.i
  %78 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %63, i64 %62)
  %ok4.i = extractvalue { i1, i64 } %78, 0
  br i1 %ok4.i, label %ok5.i, label %fail6.i

stop.i:                                           ; preds = %slow3.i
  call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit

ok5.i:                                            ; preds = %go.i
  %79 = extractvalue { i1, i64 } %78, 1
  %80 = add nsw i64 %2, -4
  %81 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %63, i64 %80)
  %ok19.i = extractvalue { i1, i64 } %81, 0
  br i1 %ok19.i, label %ok20.i, label %fail21.i

fail6.i:                                          ; preds = %go.i
  call void @mist_rt_fail(ptr nonnull %0, i32 16)
  br label %m0.fib.twin.1.exit

ok20.i:                                           ; preds = %ok5.i
  %82 = extractvalue { i1, i64 } %81, 1
  %83 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %79, i64 %82)
  %84 = extractvalue { i64, i1 } %83, 1
  br i1 %84, label %slow23.i, label %fast22.i

fail21.i:                                         ; preds = %ok5.i
  call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit

fast22.i:                                         ; preds = %ok20.i
  %85 = extractvalue { i64, i1 } %83, 0
  br label %join33.i

slow23.i:                                         ; preds = %ok20.i
  store i64 3, ptr %vals24.i, align 16
  %86 = getelementptr inbounds i8, ptr %vals24.i, i64 8
  store i64 %79, ptr %86, align 8
  %87 = getelementptr inbounds i8, ptr %vals24.i, i64 16
  store i64 3, ptr %87, align 16
  %88 = getelementptr inbounds i8, ptr %vals24.i, i64 24
  store i64 %82, ptr %88, align 8
  %89 = getelementptr i8, ptr %vm.i, i64 264
  store i32 %6, ptr %89, align 4
  %90 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals24.i, ptr nonnull %vals25.i)
  br i1 %90, label %ok26.i, label %fail27.i

ok26.i:                                           ; preds = %slow23.i
  %tag28.i = load i64, ptr %vals25.i, align 16
  %91 = getelementptr inbounds i8, ptr %vals25.i, i64 8
  %pay29.i = load i64, ptr %91, align 8
  %92 = icmp eq i64 %tag28.i, 3
  br i1 %92, label %join33.i, label %badtype31.i

fail27.i:                                         ; preds = %slow23.i
  call void @mist_rt_fail(ptr nonnull %0, i32 21)
  br label %m0.fib.twin.1.exit

badtype31.i:                                      ; preds = %ok26.i
  store i64 %tag28.i, ptr %vals32.i, align 16
  %93 = getelementptr inbounds i8, ptr %vals32.i, i64 8
  store i64 %pay29.i, ptr %93, align 8
  %94 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32.i, i32 22)
  call void @mist_rt_fail(ptr nonnull %0, i32 23)
  br label %m0.fib.twin.1.exit

join33.i:                                         ; preds = %ok26.i, %fast22.i
  %95 = phi i64 [ %85, %fast22.i ], [ %pay29.i, %ok26.i ]
  %96 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %95, 1
  br label %m0.fib.twin.1.exit

m0.fib.twin.1.exit:                               ; preds = %then.i, %stop.i, %fail6.i, %fail21.i, %fail27.i, %badtype31.i, %join33.i
  %common.ret.op.i = phi { i1, i64 } [ %61, %then.i ], [ zeroinitializer, %stop.i ], [ zeroinitializer, %fail6.i ], [ zeroinitializer, %fail21.i ], [ zeroinitializer, %fail27.i ], [ zeroinitializer, %badtype31.i ], [ %96, %join33.i ]
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals32.i)
  call void @llvm.lifetime.end.p0(i64 16, ptr nonnull %vals25.i)
  call void @llvm.lifetime.end.p0(i64 32, ptr nonnull %vals24.i)
  %ok19 = extractvalue { i1, i64 } %common.ret.op.i, 0
  br i1 %ok19, label %ok20, label %fail21

fail6:                                            ; preds = %m0.fib.twin.1.exit63
  call void @mist_rt_fail(ptr nonnull %0, i32 4)
  br label %common.ret

ok20:                                             ; preds = %m0.fib.twin.1.exit
  %97 = extractvalue { i1, i64 } %common.ret.op.i, 1
  %98 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %58, i64 %97)
  %99 = extractvalue { i64, i1 } %98, 1
  br i1 %99, label %slow23, label %fast22

fail21:                                           ; preds = %m0.fib.twin.1.exit
  call void @mist_rt_fail(ptr nonnull %0, i32 8)
  br label %common.ret

fast22:                                           ; preds = %ok20
  %100 = extractvalue { i64, i1 } %98, 0
  br label %join33

slow23:                                           ; preds = %ok20
  store i64 3, ptr %vals24, align 16
  %101 = getelementptr inbounds i8, ptr %vals24, i64 8
  store i64 %58, ptr %101, align 8
  %102 = getelementptr inbounds i8, ptr %vals24, i64 16
  store i64 3, ptr %102, align 16
  %103 = getelementptr inbounds i8, ptr %vals24, i64 24
  store i64 %97, ptr %103, align 8
  %104 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %104, align 4
  %105 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals24, ptr nonnull %vals25)
  br i1 %105, label %ok26, label %fail27

ok26:                                             ; preds = %slow23
  %tag28 = load i64, ptr %vals25, align 16
  %106 = getelementptr inbounds i8, ptr %vals25, i64 8
  %pay29 = load i64, ptr %106, align 8
  %107 = icmp eq i64 %tag28, 3
  br i1 %107, label %join33, label %badtype31

fail27:                                           ; preds = %slow23
  call void @mist_rt_fail(ptr nonnull %0, i32 9)
  br label %common.ret

badtype31:                                        ; preds = %ok26
  store i64 %tag28, ptr %vals32, align 16
  %108 = getelementptr inbounds i8, ptr %vals32, i64 8
  store i64 %pay29, ptr %108, align 8
  %109 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32, i32 10)
  call void @mist_rt_fail(ptr nonnull %0, i32 11)
  br label %common.ret

join33:                                           ; preds = %ok26, %fast22
  %110 = phi i64 [ %100, %fast22 ], [ %pay29, %ok26 ]
  %111 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %110, 1
  br label %common.ret
}

declare i1 @mist_rt_prim(ptr, i32, i32, ptr, ptr) local_unnamed_addr

declare void @mist_rt_fail(ptr, i32) local_unnamed_addr

declare i1 @mist_rt_bad_value(ptr, ptr, i32) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn
declare ptr @llvm.stacksave.p0() #0

declare i1 @mist_rt_call_check(ptr) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare { i64, i1 } @llvm.sadd.with.overflow.i64(i64, i64) #1

define noundef i1 @m0.entry(ptr %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr {
entry:
  %vm = load ptr, ptr %0, align 8
  %4 = getelementptr i8, ptr %1, i64 8
  %pay = load i64, ptr %4, align 4
  %5 = getelementptr i8, ptr %vm, i64 264
  %depth = load i32, ptr %5, align 4
  %6 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %depth, i64 %pay)
  store i32 %depth, ptr %5, align 4
  %7 = extractvalue { i1, i64 } %6, 0
  br i1 %7, label %ok, label %common.ret

common.ret:                                       ; preds = %entry, %ok
  ret i1 %7

ok:                                               ; preds = %entry
  %8 = extractvalue { i1, i64 } %6, 1
  store i64 3, ptr %3, align 4
  %9 = getelementptr i8, ptr %3, i64 8
  store i64 %8, ptr %9, align 4
  br label %common.ret
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #2

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #2

attributes #0 = { mustprogress nocallback nofree nosync nounwind willreturn }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }
